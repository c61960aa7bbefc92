// Page object of the Images page (console/src/views/images-view/): the member's own images (imported or
// built), their builds with a followed log, and the catalogue's.
import { IMAGES_TEST_IDS as T } from "@berth/console/test-ids/images";
import type { Page } from "playwright-core";
import { Shell } from "./shell.ts";

export class ImagesPage {
  readonly page: Page;
  readonly shell: Shell;
  constructor(page: Page) {
    this.page = page;
    this.shell = new Shell(page);
  }

  async openFromNav(): Promise<void> {
    await this.shell.link("Images").click();
    await this.page.getByRole("heading", { name: "Images", level: 1 }).waitFor();
  }

  async open(baseUrl: string): Promise<void> {
    await this.page.goto(`${baseUrl}/images`);
  }

  /** Imports `reference`; `opensAs`: the import form's kind (jupyterlab, code-server, terminal). */
  async importImage(reference: string, opensAs?: string): Promise<void> {
    await this.page.getByLabel("Image reference").fill(reference);
    if (opensAs) await this.page.getByTestId(T.importForm).getByLabel("Opens as").selectOption(opensAs);
    await this.page.getByRole("button", { name: "Import", exact: true }).click();
  }

  async build(dockerfile: string, name: string): Promise<void> {
    await this.page.getByLabel(/^Dockerfile/).fill(dockerfile);
    await this.page.getByLabel("Name", { exact: true }).fill(name);
    await this.page.getByRole("button", { name: "Build", exact: true }).click();
  }

  myImageRows() {
    return this.page.getByTestId(T.myImageRow);
  }
  myImage() {
    return this.myImageRows().first();
  }
  myImageState() {
    return this.myImage().getByTestId(T.myImageState);
  }
  /** The name the first of the member's images shows. */
  async myImageName(): Promise<string> {
    return (await this.myImage().locator("strong").textContent()) ?? "";
  }
  async deleteImage(name: string): Promise<void> {
    await this.page.getByRole("button", { name: `Delete ${name}` }).click();
    await this.shell.confirm();
  }

  /** Waits for this text in the followed build log. */
  async buildLogShows(text: string, timeout: number): Promise<void> {
    await this.page.getByTestId(T.buildLog).getByText(text).waitFor({ timeout });
  }
  /** Waits for the build log's closing line to say this. */
  async buildEndsWith(text: string, timeout: number): Promise<void> {
    await this.page.getByTestId(T.buildLogEnd).getByText(text).waitFor({ timeout });
  }
}
