/** A term and its value in a facts list (<dl>), left out when there is no value to show. */
export const OptionalFact = ({ term, value }: { term: string; value: string | null | undefined }) =>
  value ? (
    <>
      <dt>{term}</dt>
      <dd>{value}</dd>
    </>
  ) : null;
