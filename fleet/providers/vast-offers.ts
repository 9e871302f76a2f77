/**
 * Vast.ai offers and create, in the shapes vast-cli sends them (vast-ai/vast-cli 55679830,
 * vast.py `search__offers` and `create__instance`, vastai/api/offers.py `search_offers`,
 * vastai/api/instances.py `create_instance`; answer shapes from vast-ai/docs c6246226,
 * api-reference/openapi/yaml/search_offers.yaml and create_instance.yaml):
 *
 * - search: `POST /api/v0/bundles/` with the query itself as the JSON body (the `GET ?q=` form is
 *   commented out in vast.py): vast-cli's default filters `verified`, `external`, `rentable`,
 *   `rented`, then the caller's (`gpu_name`, `num_gpus`, `disk_space`, `dph_total`, `reliability`
 *   — the filter is `reliability`: `offers_fields` lists it and the `reliability2` alias is
 *   commented out — and `machine_id notin`), `order`, `type: "on-demand"`, `limit` and
 *   `allocated_storage` (always sent; vast-cli's default 5 GB). Answer `{offers: [...]}`.
 *   vast-cli also drops rented rows itself after the search, and so does this client, which also
 *   re-checks every other filter, so an answer that ignores one cannot rent the wrong machine.
 * - create: `PUT /api/v0/asks/{offer_id}/` with vast-cli's body: `client_id: "me"`, image, env
 *   (a dict, as vast-cli's `parse_env` makes), price (null: on demand), disk, label, extra,
 *   onstart, image_login, the utf8/jupyter flags, force, cancel_unavail, template_hash_id, user,
 *   and `runtype` only without a template (vast-cli's `get_runtype` default "ssh"). One change from
 *   vast-cli's defaults: `cancel_unavail: true`, so an offer that cannot start is refused (410)
 *   instead of becoming a stopped instance nobody asked for. Answer `{success, new_contract}`.
 */
import { z } from "zod";
import { meetingQuery, ProviderError, type CreatedInstance, type InstanceSpec, type Offer, type OfferQuery } from "./provider.ts";

/** vast-cli's search default when no disk is asked for (`--storage`, 5.0 GB). */
const DEFAULT_STORAGE_GB = 5;
/** vast-cli's create default disk (`--disk`, 10 GB). */
const DEFAULT_DISK_GB = 10;

export const vastOffer = z.object({
  id: z.number().int().nonnegative(),
  machine_id: z.number().int().nullish(),
  gpu_name: z.string(),
  num_gpus: z.number().int().positive(),
  dph_total: z.number().nonnegative(),
  disk_space: z.number().nullish(),
  reliability: z.number().nullish(),
  reliability2: z.number().nullish(),
  rented: z.boolean().nullish(),
});
export type VastOffer = z.infer<typeof vastOffer>;

export const vastOffersAnswer = z.object({ offers: z.array(vastOffer) });

/** `{success: true, new_contract}`; a refusal carries `success: false` with `error` and `msg`. */
export const vastCreateAnswer = z.object({
  success: z.boolean(),
  new_contract: z.number().int().nonnegative().nullish(),
  error: z.string().nullish(),
  msg: z.string().nullish(),
});

/** The search body for `POST /api/v0/bundles/`, key order as vast-cli builds it. */
export function offersSearchBody(query: OfferQuery): Record<string, unknown> {
  const q: Record<string, unknown> = {
    verified: { eq: true },
    external: { eq: false },
    rentable: { eq: true },
    rented: { eq: false },
    gpu_name: { eq: query.gpuName },
    num_gpus: { eq: query.gpuCount },
  };
  if (query.minDiskGb !== null) q.disk_space = { gte: query.minDiskGb };
  if (query.maxPricePerHour !== null) q.dph_total = { lte: query.maxPricePerHour };
  if (query.minReliability !== null) q.reliability = { gte: query.minReliability };
  const excluded = query.excludeMachineIds.filter((id) => /^\d{1,15}$/.test(id)).map(Number);
  if (excluded.length) q.machine_id = { notin: excluded };
  q.order = [["dph_total", "asc"]];
  q.type = "on-demand";
  q.limit = query.limit;
  q.allocated_storage = query.minDiskGb ?? DEFAULT_STORAGE_GB;
  return q;
}

/** Vast's answer, re-checked against the query (see the header), cheapest first, at most `limit`. */
export function matchingOffers(raw: VastOffer[], query: OfferQuery): Offer[] {
  const offers = raw
    .filter((o) => o.rented !== true)
    .map(
      (o): Offer => ({
        id: String(o.id),
        machineId: o.machine_id == null ? null : String(o.machine_id),
        gpuName: o.gpu_name,
        gpuCount: o.num_gpus,
        pricePerHour: o.dph_total,
        diskGb: o.disk_space ?? null,
        reliability: o.reliability2 ?? o.reliability ?? null,
      }),
    );
  return meetingQuery(offers, query);
}

/** The body of `PUT /api/v0/asks/{id}/`, as vast-cli's create__instance builds it. */
export function createBody(offer: Offer, spec: InstanceSpec): Record<string, unknown> {
  const template = spec.templateId ?? null;
  if (!spec.image && !template) throw new ProviderError("a Vast.ai instance needs an image or a template to be created from", 400);
  const body: Record<string, unknown> = {
    client_id: "me",
    image: spec.image ?? null,
    env: { ...spec.env },
    price: null,
    disk: spec.diskGb ?? offer.diskGb ?? DEFAULT_DISK_GB,
    label: spec.label,
    extra: null,
    onstart: spec.onstart ?? null,
    image_login: null,
    python_utf8: false,
    lang_utf8: false,
    use_jupyter_lab: false,
    jupyter_dir: null,
    force: false,
    cancel_unavail: true,
    template_hash_id: template,
    user: null,
  };
  if (!template) body.runtype = "ssh";
  return body;
}

/** The new instance named by Vast's answer; a 2xx without `new_contract` is an error, never a retry. */
export function createdInstance(answer: z.infer<typeof vastCreateAnswer>, offerId: string): CreatedInstance {
  if (!answer.success)
    throw new ProviderError(`Vast.ai refused to rent offer ${offerId}: ${answer.msg ?? answer.error ?? "no reason given"}`, 400);
  if (answer.new_contract == null)
    throw new ProviderError(`Vast.ai accepted offer ${offerId} but named no new_contract: the instance may exist; not retried`, 502);
  return { id: String(answer.new_contract) };
}
