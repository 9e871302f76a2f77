/**
 * One agent's view of a shared provider account: only the instances its `instanceFilter` setting
 * selects are listed, read or acted on. Wrapping the provider once (jobs/with-agent.ts) applies
 * the filter to reconciliation, the list tools and the action tools alike, so agents sharing one
 * Vast.ai key never act on each other's instances.
 */
import { instanceInFilter, type InstanceFilter } from "../../runtime/agent-settings.ts";
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
  ) {
    this.kind = inner.kind;
    this.capabilities = inner.capabilities;
    // The balance is the whole account's: every agent on it sees the same figure.
    if (inner.balance) this.balance = (call?: ProviderCall) => inner.balance!(call);
  }

  readonly balance?: (call?: ProviderCall) => Promise<number>;

  async list(): Promise<FleetInstance[]> {
    return (await this.inner.list()).filter((i) => instanceInFilter(this.filter, i));
  }

  async get(id: string): Promise<FleetInstance | null> {
    const instance = await this.inner.get(id);
    return instance && instanceInFilter(this.filter, instance) ? instance : null;
  }

  /** Refuses, before any call, an instance outside the filter (as the provider refuses an unknown one). */
  private async own(id: string): Promise<void> {
    if (this.filter.ids) {
      if (!this.filter.ids.includes(id)) throw new ProviderError(`instance ${id} is not this agent's (instance filter)`, 404);
      return;
    }
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
  async setLabel(id: string, label: string, call?: ProviderCall) {
    await this.own(id);
    return this.inner.setLabel(id, label, call);
  }
  async logs(id: string, request: LogRequest) {
    await this.own(id);
    return this.inner.logs(id, request);
  }
  offers(query: OfferQuery, call?: ProviderCall) {
    return this.inner.offers(query, call);
  }
  create(offer: Offer, spec: InstanceSpec, call?: ProviderCall) {
    return this.inner.create(offer, spec, call);
  }
}
