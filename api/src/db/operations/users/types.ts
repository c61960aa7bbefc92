export interface UserRow {
  id: string;
  email: string;
  display_name: string | null;
  password_hash: string;
  must_change_password: boolean;
  is_super_admin: boolean;
  disabled: boolean;
  token_version: number;
  password_changed_at: Date | null;
  last_login_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/** A user as lists read it: what the list presents, never the password hash or the token version. */
export type UserListRow = Omit<UserRow, "password_hash" | "token_version" | "password_changed_at">;

/** Which users a non-super caller may see: itself, and everyone in what it administers. */
export interface UserVisibility {
  selfId: string;
  adminOrganizationIds: string[];
  adminProjectIds: string[];
}
