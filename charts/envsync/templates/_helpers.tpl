{{/*
The objects' name: the release's when it holds the chart's name (a release named envsync makes
the objects of examples/kubernetes), else release-chart.
*/}}
{{- define "envsync.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 52 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 52 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* What selects the pods. Fixed for the life of a release: selectors cannot change. */}}
{{- define "envsync.selectorLabels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "envsync.labels" -}}
{{ include "envsync.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* An image reference from {repository, tag, digest}: repository:tag, then @digest if given. */}}
{{- define "envsync.image" -}}
{{- .repository }}:{{ .tag }}{{ with .digest }}@{{ . }}{{ end -}}
{{- end -}}

{{/*
The port a repository or API address connects to: its own, or its scheme's (22 for SSH, which
includes git@host:path).
*/}}
{{- define "envsync.port" -}}
{{- if regexMatch "^[a-z]+://" . -}}
{{- $url := urlParse . -}}
{{- $port := regexFind "[0-9]+$" (regexFind ":[0-9]+$" $url.host) -}}
{{- $port | default (get (dict "https" "443" "http" "80" "ssh" "22") $url.scheme) -}}
{{- else -}}
22
{{- end -}}
{{- end -}}

{{/* The flags both git-sync containers share. */}}
{{- define "envsync.gitSyncArgs" -}}
- {{ printf "--repo=%s" .Values.git.repository | toJson }}
- {{ printf "--ref=%s" .Values.git.branch | toJson }}
- --root=/git
- --link=repo
- --depth=1
{{- end -}}

{{/* A private repository's credentials, for both git-sync containers (git-sync's defaults read
the SSH key and known_hosts from /etc/git-secret). */}}
{{- define "envsync.gitSyncCredentials" -}}
{{- if and .Values.git.credentialsSecret (hasPrefix "https://" .Values.git.repository) -}}
env:
  - name: GITSYNC_USERNAME
    valueFrom:
      secretKeyRef:
        name: {{ .Values.git.credentialsSecret }}
        key: username
  - name: GITSYNC_PASSWORD_FILE
    value: /etc/git-secret/password
{{- end }}
{{- end -}}

{{- define "envsync.gitSyncSecurity" -}}
securityContext:
  runAsUser: 65533
  runAsGroup: 65533
  allowPrivilegeEscalation: false
  readOnlyRootFilesystem: true
  capabilities:
    drop: [ALL]
volumeMounts:
  - name: git
    mountPath: /git
  # git-sync's HOME (its ~/.gitconfig), writable on a read-only root filesystem.
  - name: git-home
    mountPath: /tmp
  {{- if .Values.git.credentialsSecret }}
  - name: git-secret
    mountPath: /etc/git-secret
    readOnly: true
  {{- end }}
{{- end -}}
