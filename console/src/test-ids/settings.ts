// Test ids of system settings (branding, sign-up policy, placement, faults, signatures), sign-up and its approval queue.
export const SETTINGS_TEST_IDS = {
  /** A settings section's saved notice (branding, signup, placement). */
  saved: (section: string) => `saved-${section}`,
  /** A tab of the settings pages' navigation. */
  tab: (name: string) => `settings-tab-${name}`,
  brandingForm: "branding-form",
  brandingSave: "branding-save",
  currentLogo: "current-logo",
  signupPolicySave: "signup-policy-save",
  placementSave: "placement-save",
  faultsForm: "hardware-faults-form",
  faultsSave: "hardware-faults-save",
  signaturesForm: "image-signatures-form",
  signaturesSave: "image-signatures-save",
  signingKeys: "signing-keys",
  /** A trusted key's row, by name (berth: Berth's own). */
  signingKey: (name: string) => `signing-key-${name}`,
  signupClosed: "signup-closed",
  signupForm: "signup-form",
  signupSubmit: "signup-submit",
  signupProblem: "signup-problem",
  signupDone: "signup-done",
  signupRequest: "signup-request",
  approve: "approve",
  signupNotice: "signup-notice",
  signupPolicyForm: "signup-policy-form",
  placementForm: "placement-form",
  signupRequests: "signup-requests",
  deny: "deny",
} as const;
