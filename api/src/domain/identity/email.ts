/** Emails are compared and stored trimmed and lowercased (users.email has a CHECK for it). */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}
