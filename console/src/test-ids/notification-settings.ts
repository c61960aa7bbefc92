// Test ids of the notification settings page (the bell is the shell's).
export const NOTIFICATION_SETTINGS_TEST_IDS = {
  preferences: "preferences",
  preference: "preference",
  preferenceSwitch: "preference-switch",
  preferencesSaved: "preferences-saved",
  alwaysOn: "always-on",
} as const;
