/**
 * A generated part of a page written by people: the text between two marker lines is the
 * generator's, the rest the authors'.
 */

/** The two marker lines around a generated part. */
export interface Markers {
  readonly begin: string;
  readonly end: string;
}

/** `page` with the text between the markers replaced by `section`. */
export function withSection(page: string, section: string, file: string, markers: Markers): string {
  const begin = page.indexOf(markers.begin);
  const end = page.indexOf(markers.end);
  if (begin < 0 || end < begin) {
    throw new Error(`${file} lacks the lines ${markers.begin} and ${markers.end}, in that order`);
  }
  return `${page.slice(0, begin + markers.begin.length)}\n\n${section}\n\n${page.slice(end)}`;
}
