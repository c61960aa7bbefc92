// The checks the password form makes before asking the API (which checks again): the same rules as
// ChangePasswordRequest in the contract (at least 12 characters, different from the current one).
export const MIN_PASSWORD_LENGTH = 12;

export function passwordProblems(current: string, next: string, repeat: string): string[] {
  const out: string[] = [];
  if (next.length < MIN_PASSWORD_LENGTH) out.push(`The new password needs at least ${MIN_PASSWORD_LENGTH} characters.`);
  if (next && next === current) out.push("The new password must differ from the current one.");
  if (next !== repeat) out.push("The two new passwords do not match.");
  return out;
}
