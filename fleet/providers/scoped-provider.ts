/**
 * One agent's view of a shared provider account: only the instances its `instanceFilter` setting
 * selects are listed, read or acted on. Wrapping the provider once (jobs/with-agent.ts) applies
 * the filter to reconciliation, the list tools and the action tools alike, so agents sharing one
 * Vast.ai key never act on each other's instances.
 *
 * What the agent rents is its own from the provider's first answer (issue #33 item 6): create
 * labels it so the filter claims it (the label prefix of a `labelPrefix` filter; `fw-own:<agent>:`,
 * which an `ids` filter also claims), so reconciliation records it and the agent can supervise and
 * destroy it; a relabel that would take an instance out of the filter is refused before any call
 * (a model hiding its own rental from its own supervision).
 */
import { instanceInFilter, ownLabelPrefix, type InstanceFilter } from "../../runtime/agent-settings.ts";
import {
  ProviderError,
  type FleetInstance,
  type FleetProvider,
  type InstanceSpec,
  type LogRequest,
  type Offer,
  type OfferQuery,
  type ProviderCall,
} from "./provider.ts";

/** The whole account behind an agent's provider (the provider itself when it is not scoped). */
export function accountProvider(provider: FleetProvider): FleetProvider {
  return provider instanceof ScopedProvider ? provider.inner : provider;
}

export class ScopedProvider implements FleetProvider {
  readonly kind: FleetProvider["kind"];
  readonly capabilities: FleetProvider["capabilities"];

  constructor(
    /** The whole account (the simulator's own reports and heartbeats need it). */
    readonly inner: FleetProvider,
    private readonly filter: InstanceFilter,
    /** Whose filter it is: an ids filter claims this agent's own rentals by their label. */
    readonly agentId: string,
  ) {
    this.kind = inner.kind;
    this.capabilities = inner.capabilities;
    // The balance is the whole account's: every agent on it sees the same figure.
    if (inner.balance) this.balance = (call?: ProviderCall) => inner.balance!(call);
  }

  readonly balance?: (call?: ProviderCall) => Promise<number>;

  async list(): Promise<FleetInstance[]> {
    return (await this.inner.list()).filter((i) => instanceInFilter(this.filter, i, this.agentId));
  }

  async get(id: string): Promise<FleetInstance | null> {
    const instance = await this.inner.get(id);
    return instance && instanceInFilter(this.filter, instance, this.agentId) ? instance : null;
  }

  /**
   * Refuses, before any call that acts, an instance outside the filter (as the provider refuses an
   * unknown one): an id the ids filter lists at once; anything else by reading it (an own rental
   * is claimed by its label).
   */
  private async own(id: string): Promise<void> {
    if (this.filter.ids?.includes(id)) return;
    if (!(await this.get(id))) throw new ProviderError(`instance ${id} is not this agent's (instance filter)`, 404);
  }

  async start(id: string, call?: ProviderCall) {
    await this.own(id);
    return this.inner.start(id, call);
  }
  async stop(id: string, call?: ProviderCall) {
    await this.own(id);
    return this.inner.stop(id, call);
  }
  async reboot(id: string, call?: ProviderCall) {
    await this.own(id);
    return this.inner.reboot(id, call);
  }
  async destroy(id: string, call?: ProviderCall) {
    await this.own(id);
    return this.inner.destroy(id, call);
  }
  /** A relabel keeps the instance in the filter: refused (403, no call) when the new label would leave it. */
  async setLabel(id: string, label: string, call?: ProviderCall) {
    await this.own(id);
    if (!instanceInFilter(this.filter, { id, label }, this.agentId))
      throw new ProviderError(`label "${label}" would take ${id} out of this agent's instance filter: refused`, 403);
    return this.inner.setLabel(id, label, call);
  }
  async logs(id: string, request: LogRequest) {
    await this.own(id);
    return this.inner.logs(id, request);
  }
  offers(query: OfferQuery, call?: ProviderCall) {
    return this.inner.offers(query, call);
  }
  /** Rents with a label the filter claims (`claim`), so the new instance is the agent's own from its first minute. */
  create(offer: Offer, spec: InstanceSpec, call?: ProviderCall) {
    return this.inner.create(offer, { ...spec, label: this.claim(spec.label ?? "") }, call);
  }

  /** The label as this agent's filter claims it: unchanged when it already does, else prefixed. */
  claim(label: string): string {
    const prefix = this.filter.ids ? ownLabelPrefix(this.agentId) : (this.filter.labelPrefix ?? "");
    return label.startsWith(prefix) ? label : `${prefix}${label}`;
  }
}

/** The label an instance rented through `provider` with `label` carries (its marker, as the scoped provider claims it). */
export function labelAsRented(provider: FleetProvider, label: string): string {
  return provider instanceof ScopedProvider ? provider.claim(label) : label;
}
