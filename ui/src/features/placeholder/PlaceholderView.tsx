// An honest stand-in for a view not built yet: says what it will do and that it is not here.
interface Props {
  title: string;
  purpose: string;
}

export function PlaceholderView({ title, purpose }: Props) {
  return (
    <section className="placeholder" aria-label={title}>
      <h1>{title}</h1>
      <p>{purpose}</p>
      <p className="placeholder-note">This view arrives in a later version.</p>
    </section>
  );
}
