/** Sign-in page: an operator token or ADMIN_TOKEN, posted once; the browser then holds a session cookie. */
import { Document } from "../shell/layout.tsx";
import { CSRF_FIELD } from "../../auth/session-write.ts";

export function SignInPage(props: { token: string; next: string; error?: string | null; notice?: string | null; configured: boolean }) {
  return (
    <Document title="Sign in">
      <body>
        <main id="main">
          <h1>Sign in to fleetwarden</h1>
          {props.notice ? (
            <p class="notice" role="status">
              {props.notice}
            </p>
          ) : null}
          {props.error ? (
            <p class="error" role="alert" id="sign-in-error">
              {props.error}
            </p>
          ) : null}
          {props.configured ? (
            <form method="post" action="/sign-in" class="panel">
              <input type="hidden" name={CSRF_FIELD} value={props.token} />
              <input type="hidden" name="next" value={props.next} />
              <div class="field">
                <label for="admin-token">Operator or admin token</label>
                <input
                  id="admin-token"
                  name="token"
                  type="password"
                  autocomplete="current-password"
                  required
                  autofocus
                  aria-describedby={props.error ? "sign-in-error token-help" : "token-help"}
                />
                <p class="muted" id="token-help">
                  Your operator token, or the ADMIN_TOKEN of this deployment (<code>npm start</code> prints it the first time and stores it
                  in data/admin-token).
                </p>
              </div>
              <button type="submit">Sign in</button>
            </form>
          ) : (
            <p class="error">No ADMIN_TOKEN is configured, so nobody can sign in. Set ADMIN_TOKEN and restart.</p>
          )}
        </main>
      </body>
    </Document>
  );
}
