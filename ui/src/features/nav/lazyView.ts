// A view in a chunk of its own that the window fetches once its first screen is up, while it
// idles: the first screen parses none of it, and opening the view later renders at once instead
// of waiting for its chunk (and for React's hold on a revealed Suspense boundary, some 300 ms).
// Rule: one fetch per view; a view mounted before its chunk has come renders through React.lazy
// (the Suspense fallback shows), one mounted after as a plain component.
import { type ComponentType, type FunctionComponent, createElement, lazy, useState } from "react";

export interface LazyView<P> extends FunctionComponent<P> {
  /** Starts fetching the view's chunk (once; later calls do nothing). */
  preload: () => Promise<unknown>;
}

export function lazyView<P extends object>(load: () => Promise<ComponentType<P>>): LazyView<P> {
  let loaded: ComponentType<P> | null = null;
  let loading: Promise<ComponentType<P>> | null = null;
  const preload = () =>
    (loading ??= load().then((component) => {
      loaded = component;
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

/** Fetches `views`' chunks one after another while the window idles (a frame after `delayMs`). */
export function preloadWhenIdle(views: LazyView<never>[], delayMs: number): () => void {
  let stopped = false;
  const idle = (run: () => void) =>
    typeof requestIdleCallback === "function" ? requestIdleCallback(run, { timeout: 1000 }) : setTimeout(run, 0);
  const next = (i: number) => {
    if (stopped || i >= views.length) return;
    idle(() => {
      if (stopped) return;
      views[i]?.preload().then(
        () => next(i + 1),
        () => next(i + 1),
      );
    });
  };
  const timer = setTimeout(() => next(0), delayMs);
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}
