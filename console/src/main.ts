// The console's entry: registers the shell, which starts the router.
import "./components/app-shell/index.ts";
