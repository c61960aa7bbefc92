// Registers a custom element once (hot reload and tests may import a module twice).
export function define(tag: string, ctor: CustomElementConstructor): void {
  if (!customElements.get(tag)) customElements.define(tag, ctor);
}
