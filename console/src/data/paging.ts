/** Number of pages for a total and a page size (at least 1, so "page 1 of 1" on an empty list). */
export function pageCount(total: number, size: number): number {
  if (!(size > 0)) return 1;
  return Math.max(1, Math.ceil(total / size));
}

/** A page number from the URL, clamped to 1.. (the API answers an empty page past the end). */
export function pageFromQuery(value: string | null): number {
  const n = Number(value);
  return Number.isInteger(n) && n >= 1 ? n : 1;
}
