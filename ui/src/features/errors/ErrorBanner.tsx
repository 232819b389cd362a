// Errors the user must see in every view (engine `error` events, refused answers, failures to
// reach the engine), dismissable.
import type { ErrorEntry } from "../../store/state";

interface Props {
  errors: ErrorEntry[];
  onDismiss: (key: string) => void;
}

export function ErrorBanner({ errors, onDismiss }: Props) {
  if (errors.length === 0) return null;
  return (
    <div className="error-banner" role="alert">
      {errors.map(({ key, info }) => (
        <div key={key} className="error-row">
          <span className="error-code">{info.code}</span>
          <span className="error-message">{info.message}</span>
          {info.retryable && <span className="muted">(may work if you try again)</span>}
          <button type="button" className="link-button" onClick={() => onDismiss(key)} aria-label="Dismiss error">
            ×
          </button>
        </div>
      ))}
    </div>
  );
}
