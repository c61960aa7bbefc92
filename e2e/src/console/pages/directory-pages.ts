// Page object of the directory's admin pages (console/src/views/admin-users-view/, admin-organizations-view/,
// admin-projects-view/): their tables, an organization's members panel, and the new-user form.
import { DIRECTORY_TEST_IDS as D } from "@berth/console/test-ids/directory";
import type { Page } from "playwright-core";

export class DirectoryPages {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }

  usersTable() {
    return this.page.getByTestId(D.usersTable);
  }
  organizationsTable() {
    return this.page.getByTestId(D.organizationsTable);
  }
  projectsTable() {
    return this.page.getByTestId(D.projectsTable);
  }

  /** Opens an organization's members panel from its row (on the organizations page). */
  async openMembers(organization: string): Promise<void> {
    await this.page.getByRole("button", { name: `Members of ${organization}` }).click();
    await this.membersPanel().waitFor();
  }
  membersPanel() {
    return this.page.getByTestId(D.membersPanel);
  }
  async addMember(email: string, role: string): Promise<void> {
    const panel = this.membersPanel();
    await panel.getByLabel("Email").fill(email);
    await panel.getByLabel("Role").selectOption(role);
    await panel.getByRole("button", { name: "Add member" }).click();
  }
  /** A member's row in the panel, by what it reads ("newcomer@example.test org admin"). */
  memberRow(name: RegExp) {
    return this.membersPanel().getByRole("row", { name });
  }
  async removeMember(email: string): Promise<void> {
    await this.membersPanel()
      .getByRole("button", { name: `Remove ${email}` })
      .click();
  }

  /** Opens the new-user form (on the users page). */
  async newUser(): Promise<void> {
    await this.page.getByRole("button", { name: "New user" }).click();
    await this.page.getByTestId(D.createUserForm).waitFor();
  }
}
