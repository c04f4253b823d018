// Hash routes (#/deals, #/invite/<token>): the platform serves one index.html, and a token in the hash never reaches
// a server log.
import { useEffect, useState } from 'preact/hooks';

export interface Route {
  page: string;
  param: string | undefined;
}

export function parse(hash: string): Route {
  const [page = '', param] = hash.replace(/^#\/?/, '').split('/');
  return { page: page || 'home', param: param ? decodeURIComponent(param) : undefined };
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parse(location.hash));
  useEffect(() => {
    const changed = () => setRoute(parse(location.hash));
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}

export const go = (page: string, param?: string): void => {
  location.hash = `#/${page}${param ? `/${encodeURIComponent(param)}` : ''}`;
};
