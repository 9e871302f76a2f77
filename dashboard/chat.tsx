/**
 * Chat: send the agent a message (an inbox event, priority 0) and read its replies. The thread
 * updates live, so a reply appears without a reload once the run that consumed the message ends.
 */
import type { ChatEntry } from "./chat-thread.ts";
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

export function ChatThread({ entries, now }: { entries: ChatEntry[]; now: number }) {
  if (entries.length === 0) return <p>No messages yet. Ask the agent something about the fleet.</p>;
  return (
    <ol class="cards" aria-label="Messages, oldest first">
      {entries.map((entry) => (
        <li class="card chat-item" data-event-id={String(entry.eventId)}>
          <p class="muted">{`You, ${utcTime(entry.sentAt)} (${relative(entry.sentAt, now)})`}</p>
          <p class="said" data-role="message">
            {entry.text}
          </p>
          <Outcome entry={entry} />
        </li>
      ))}
    </ol>
  );
}

export function ChatPage(props: { entries: ChatEntry[]; now: number; csrf: string; sessionEpoch: number; summary: string; error?: string | null }) {
  return (
    <>
      <div data-live="chat">
        <ChatThread entries={props.entries} now={props.now} />
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
