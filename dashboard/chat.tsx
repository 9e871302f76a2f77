/**
 * Chat: send the agent a message (an inbox event, priority 0) and read its replies. The thread
 * updates live, so a reply appears without a reload once the run that consumed the message ends.
 */
import { epochOf, type ChatEntry, type ChatThreadData, type SessionStart } from "./chat-thread.ts";
import { relative, utcTime } from "./format.ts";
import { CsrfField } from "./layout.tsx";

function Outcome({ entry }: { entry: ChatEntry }) {
  switch (entry.state) {
    case "waiting":
      return <p class="muted">Waiting for the agent’s next run…</p>;
    case "working":
      return <p class="muted">{`The agent is answering (run #${entry.runId})…`}</p>;
    case "retrying":
      return <p class="muted">{`Run #${entry.runId} failed; the message will be handled by a retry.`}</p>;
    case "answered":
      if (!entry.showsReply) return <p class="muted">{`Answered together with a later message by run #${entry.runId}.`}</p>;
      return (
        <div class="reply" data-role="reply" data-testid={`reply-${entry.eventId}`}>
          <p class="visually-hidden">Agent’s reply:</p>
          {entry.reply ?? "(the run finished without a reply)"}
          <p class="muted">
            <a href={`/runs/${entry.runId}`}>{`run #${entry.runId}`}</a>
          </p>
        </div>
      );
  }
}

function SessionDivider({ session }: { session: SessionStart }) {
  return (
    <li class="session-divider" data-testid="session-divider" data-epoch={String(session.epoch)}>
      {`New session (epoch ${session.epoch}) started by a session reset at ${utcTime(session.startedAt)}. The agent no longer sees the messages above.`}
    </li>
  );
}

/** The sessions that start after `previous` up to and including `epoch`, each a divider. */
const startsBetween = (sessions: SessionStart[], previous: number, epoch: number) => sessions.filter((s) => s.epoch > previous && s.epoch <= epoch);

export function ChatThread({ thread, now }: { thread: ChatThreadData; now: number }) {
  const { entries, sessions } = thread;
  const latest = sessions.at(-1)?.epoch ?? 1;
  if (entries.length === 0) return <p>No messages yet. Ask the agent something about the fleet.</p>;
  let previous = epochOf(entries[0]!, sessions);
  return (
    <ol class="cards" aria-label="Messages, oldest first">
      {entries.map((entry) => {
        const epoch = epochOf(entry, sessions);
        const dividers = startsBetween(sessions, previous, epoch);
        previous = Math.max(previous, epoch);
        return (
          <>
            {dividers.map((session) => (
              <SessionDivider session={session} />
            ))}
            <ChatItem entry={entry} now={now} />
          </>
        );
      })}
      {startsBetween(sessions, previous, latest).map((session) => (
        <SessionDivider session={session} />
      ))}
    </ol>
  );
}

function ChatItem({ entry, now }: { entry: ChatEntry; now: number }) {
  return (
        <li class="card chat-item" data-event-id={String(entry.eventId)}>
          <p class="muted">{`You, ${utcTime(entry.sentAt)} (${relative(entry.sentAt, now)})`}</p>
          <p class="said" data-role="message">
            {entry.text}
          </p>
          <Outcome entry={entry} />
        </li>
  );
}

export function ChatPage(props: { thread: ChatThreadData; now: number; csrf: string; sessionEpoch: number; summary: string; error?: string | null }) {
  return (
    <>
      <div data-live="chat">
        <ChatThread thread={props.thread} now={props.now} />
      </div>
      <form method="post" action="/chat" class="panel">
        <CsrfField token={props.csrf} />
        <input type="hidden" name="nonce" value={crypto.randomUUID()} />
        <div class="field">
          <label for="chat-text">Message to the agent</label>
          {props.error ? (
            <p class="error" id="chat-error">
              {props.error}
            </p>
          ) : null}
          <textarea id="chat-text" name="text" required maxlength={8000} aria-describedby={props.error ? "chat-error" : undefined}></textarea>
        </div>
        <button type="submit">Send</button>
      </form>
      <details>
        <summary>{`What the agent remembers of this session (epoch ${props.sessionEpoch})`}</summary>
        <p>{props.summary ? props.summary : "No summary yet: nothing in this session has been compacted."}</p>
      </details>
    </>
  );
}
