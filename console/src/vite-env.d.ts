// Vite's `?inline` imports: a stylesheet as a string (uPlot's, adopted into a shadow root).
declare module "*.css?inline" {
  const css: string;
  export default css;
}
