/**
 * The customer portal's entry: the session key is in the address only on the first load
 * (/portal/<key>, exchanged by the service for the credential cookie), so it is replaced by
 * /portal/ at once and does not stay in the history or reach any other request.
 */
import { render } from "preact";
import { Provider } from "@urql/preact";
import { client } from "./api.js";
import { App } from "./app.js";
import "./styles.css";

if (location.pathname !== "/portal/") history.replaceState(null, "", `/portal/${location.hash}`);

render(
  <Provider value={client}>
    <App />
  </Provider>,
  document.getElementById("app")!,
);
