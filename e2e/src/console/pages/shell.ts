// What every page of the console shares: the admin menu, the confirm dialog, notices and empty states.
import { SHELL_TEST_IDS as T } from "@berth/console/test-ids/shell";
import type { Page } from "playwright-core";

export class Shell {
  readonly page: Page;
  constructor(page: Page) {
    this.page = page;
  }

  /** Opens an admin page from the admin menu by its link's name. */
  async openAdmin(link: string): Promise<void> {
    await this.page.getByTestId(T.adminMenu).click();
    await this.page.getByRole("link", { name: link, exact: true }).click();
    await this.page.getByRole("heading", { name: link, level: 1 }).waitFor();
  }

  adminMenu() {
    return this.page.getByTestId(T.adminMenu);
  }

  /** The account menu, there once the person is signed in and the app has loaded. */
  accountMenu() {
    return this.page.getByTestId(T.accountMenu);
  }

  /** Waits for the app to be signed in and loaded (its account menu). */
  async signedIn(): Promise<void> {
    await this.accountMenu().waitFor();
  }

  accountEmail() {
    return this.page.getByTestId(T.accountEmail);
  }

  accountPanel() {
    return this.page.getByTestId(T.accountPanel);
  }

  async signOut(): Promise<void> {
    await this.page.getByTestId(T.signOut).click();
  }

  /** The admin menu's panel of links. */
  adminPanel() {
    return this.page.getByTestId(T.adminPanel);
  }

  /** The header's balance (a link to the person's wallet). */
  headerBalance() {
    return this.page.getByTestId(T.headerBalance);
  }

  /** A link in the navigation or a menu, by its exact name. */
  link(name: string) {
    return this.page.getByRole("link", { name, exact: true });
  }

  /** Every link whose name holds this text (to count the links a person is not offered). */
  linksContaining(name: string) {
    return this.page.getByRole("link", { name });
  }

  /** The product's name and logo in the header (the branding). */
  brandName() {
    return this.page.getByTestId(T.brandName);
  }

  brandLogo() {
    return this.page.getByTestId(T.brandLogo);
  }

  /** The header's live indicator: its data-mode is live or polling. */
  liveIndicator() {
    return this.page.getByTestId(T.liveIndicator);
  }

  bell() {
    return this.page.getByTestId(T.bell);
  }

  notificationPanel() {
    return this.page.getByTestId(T.panel);
  }

  async readAllNotifications(): Promise<void> {
    await this.page.getByTestId(T.readAll).click();
  }

  notificationCount() {
    return this.page.getByTestId(T.count);
  }

  async openBell(): Promise<void> {
    await this.page.getByTestId(T.bell).click();
  }

  /** A notification in the bell's panel, by its kind. */
  notification(kind: string) {
    return this.page.locator(`[data-testid="${T.item}"][data-kind="${kind}"]`);
  }

  confirmDialog() {
    return this.page.getByTestId(T.confirmDialog);
  }

  confirmOk() {
    return this.page.getByTestId(T.confirmOk);
  }

  /** A notification's link in the bell's panel, by its kind (and, given, the link's name). */
  notificationLink(kind: string, name?: string) {
    return this.notification(kind).getByRole("link", name ? { name } : {});
  }

  async confirm(): Promise<void> {
    await this.page.getByTestId(T.confirmDialog).waitFor();
    await this.page.getByTestId(T.confirmOk).click();
  }

  /** Waits for a notice or message with this text. */
  async sees(text: string | RegExp): Promise<void> {
    await this.page.getByText(text).waitFor();
  }

  /** Waits for the first of the places that say this (a message repeated in a field's hint and a panel). */
  async seesFirst(text: string | RegExp): Promise<void> {
    await this.page.getByText(text).first().waitFor();
  }

  emptyState() {
    return this.page.getByTestId(T.emptyState);
  }

  errorMessage() {
    return this.page.getByTestId(T.errorMessage);
  }

  errorPanel() {
    return this.page.getByTestId(T.errorPanel);
  }

  errorRequestId() {
    return this.page.getByTestId(T.errorRequestId);
  }

  /** The error panel's message and request id (a page may show other messages besides). */
  errorPanelMessage() {
    return this.errorPanel().getByTestId(T.errorMessage);
  }

  errorPanelRequestId() {
    return this.errorPanel().getByTestId(T.errorRequestId);
  }

  /** The router's answer to an unknown path. */
  notFound() {
    return this.page.getByRole("heading", { name: "Page not found" });
  }

  /** A page's success notice (role=status). */
  notice() {
    return this.page.getByTestId(T.notice);
  }

  /** The app waiting for the person's account, and the account that did not load (with a retry). */
  accountPending() {
    return this.page.getByTestId(T.accountPending);
  }

  accountError() {
    return this.page.getByTestId(T.accountError);
  }

  /** Waits for the account's failure to say this. */
  async accountErrorSays(text: string): Promise<void> {
    await this.accountError().getByText(text).waitFor();
  }

  /** The account's failure's "Try again". */
  accountRetry() {
    return this.accountError().getByRole("button", { name: "Try again" });
  }
}
