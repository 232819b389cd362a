// A view in a chunk of its own, fetched when the view is first opened: the first screen parses
// none of it and idle memory holds none of it. The window fetches the chunk and then switches
// (`setView` in App), so the view renders at once as a plain component instead of waiting behind a
// Suspense fallback (React holds a revealed boundary some 300 ms).
// Rule: one fetch per view; a view mounted before its chunk has come renders through React.lazy
// (the Suspense fallback shows), one mounted after as a plain component.
import { type ComponentType, type FunctionComponent, createElement, lazy, useState } from "react";

export interface LazyView<P> extends FunctionComponent<P> {
  /** Fetches the view's chunk (once; later calls return the same promise). */
  preload: () => Promise<unknown>;
}

/** `name` marks the chunk's arrival on the page's timeline (`bridle: view chunk <name>`), which
 * the benchmark and the smoke test read. */
export function lazyView<P extends object>(name: string, load: () => Promise<ComponentType<P>>): LazyView<P> {
  let loaded: ComponentType<P> | null = null;
  let loading: Promise<ComponentType<P>> | null = null;
  const preload = () =>
    (loading ??= load().then((component) => {
      loaded = component;
      performance.mark?.(`bridle: view chunk ${name}`);
      return component;
    }));
  const Lazy = lazy(() => preload().then((component) => ({ default: component })));
  // Chosen once per mount: switching from Lazy to the loaded component would remount the view.
  const View = (props: P) => {
    const [component] = useState<ComponentType<P>>(() => loaded ?? (Lazy as unknown as ComponentType<P>));
    return createElement(component, props);
  };
  return Object.assign(View, { preload });
}
