/**
 * The hash route both frontends navigate by (the portal's `#/invoice/<id>`, the dashboard's `#/invoices/<id>`).
 */
import { useEffect, useState } from "preact/hooks";

/** `location.hash`, followed as it changes (`#...`, "" when there is none). */
export function useHash(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const update = () => setHash(location.hash);
    addEventListener("hashchange", update);
    // a change between the first render and this effect fired no event we heard (a link followed, or an address
    // typed, while the page was still starting): read the hash once more now that we listen
    update();
    return () => removeEventListener("hashchange", update);
  }, []);
  return hash;
}
