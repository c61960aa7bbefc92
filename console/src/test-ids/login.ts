// Test ids of signing in and the password change forced at first sign-in (views/login-view, views/password-view).
export const LOGIN_TEST_IDS = {
  expiredNotice: "expired-notice",
  loginEmail: "login-email",
  loginForm: "login-form",
  loginHeading: "login-heading",
  loginLogo: "login-logo",
  loginPassword: "login-password",
  loginSubmit: "login-submit",
  signupLink: "signup-link",
  forcedPasswordNotice: "forced-password-notice",
  passwordCurrent: "password-current",
  passwordForm: "password-form",
  passwordNew: "password-new",
  passwordProblems: "password-problems",
  passwordRepeat: "password-repeat",
  passwordSubmit: "password-submit",
} as const;
