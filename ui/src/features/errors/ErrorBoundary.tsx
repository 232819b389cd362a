// A view that throws while rendering shows what broke and a way to try again, instead of taking
// the whole window down to a blank page; the other views and the session go on.
import { Component, type ErrorInfo as ReactErrorInfo, type ReactNode } from "react";

interface Props {
  children: ReactNode;
}

interface State {
  error: Error | null;
}

export class ErrorBoundary extends Component<Props, State> {
  state: State = { error: null };

  static getDerivedStateFromError(error: unknown): State {
    return { error: error instanceof Error ? error : new Error(String(error)) };
  }

  componentDidCatch(error: Error, info: ReactErrorInfo): void {
    console.error("a view failed to render", error, info.componentStack);
  }

  render() {
    const { error } = this.state;
    if (!error) return this.props.children;
    return (
      <div className="error-boundary" role="alert" data-testid="error-boundary">
        <h2>This view stopped working</h2>
        <p>
          Nothing was lost: the session and its history are kept by the engine. The error was: <code>{error.message}</code>
        </p>
        <button type="button" className="button" data-testid="error-boundary-retry" onClick={() => this.setState({ error: null })}>
          Try again
        </button>
      </div>
    );
  }
}
