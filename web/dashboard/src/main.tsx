/** The dashboard's entry: the shared GraphQL client (with the member's cookie, CSRF and mode headers) and the app. */
import { render } from "preact";
import { Provider } from "@urql/preact";
import { client } from "./api.js";
import { App } from "./app.js";
import "./styles.css";

render(
  <Provider value={client}>
    <App />
  </Provider>,
  document.getElementById("app")!,
);
