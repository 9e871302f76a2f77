/** The confirmation page a reset without JavaScript lands on: what reset keeps, and the real button. */
import { ResetForm, RESET_KEEPS } from "./action-forms.tsx";

export function ResetConfirmPage({ csrf }: { csrf: string }) {
  return (
    <section class="panel">
      <p>{RESET_KEEPS}</p>
      <div class="actions">
        <ResetForm csrf={csrf} confirmed />
        <a class="button secondary" href="/">
          Cancel
        </a>
      </div>
    </section>
  );
}
