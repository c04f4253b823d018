// Hash routes (#/apps/<id>, #/signup/<token>): the platform serves one page at /console/, and a token in the hash
// never reaches a server log.
import { useEffect, useState } from 'preact/hooks';

/** The path's segments after '#/', decoded: '#/apps/abc' is ['apps', 'abc']. */
export type Route = string[];

const parse = (hash: string): Route => hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location.hash));
  useEffect(() => {
    const changed = () => setRoute(parse(location.hash));
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

export const href = (...parts: string[]): string => `#/${parts.map(encodeURIComponent).join('/')}`;
