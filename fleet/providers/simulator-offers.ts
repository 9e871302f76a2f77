/**
 * The simulator's rental market (issue #23 item 6): a fixed catalogue of machines, so offers are
 * deterministic and a replacement runs on `npm start` with no keys. The simulator has no column
 * for a machine, a disk or an image (no migration for it), so they are derived: a seeded instance
 * sits on the first machine of its GPU's catalogue (`sim-host-<gpu>-1`), a created one carries its
 * machine in its id (`sim-on-<machine>-<n>`); its spec is the simulator's one image with the
 * instance's label and disk. A created instance is `loading` until SIM_BOOT_MS after its create,
 * then reports `running` (its startedAt holds when: derived at read time, so listing writes nothing), unless a scripted
 * failure (`stuck_loading`) holds it.
 */
import type { InstanceSpec, Offer } from "./provider.ts";

/** The simulated hosts' one image. */
export const SIM_IMAGE = "fleetwarden/sim-trainer:latest";
/** How long a created simulated instance takes to come up. */
export const SIM_BOOT_MS = 60_000;
/** The status message a created instance has while it boots (how a boot is told from a stuck load). */
export const SIM_BOOTING = "loading: pulling image (created)";
/** GB of disk per GPU a seeded instance has. */
const DISK_GB_PER_GPU = 100;

/** Per GPU model: machines at these price factors, reliabilities and disks (× the model's base). */
const MACHINE_SHAPES = [
  { factor: 0.9, reliability: 0.99, disk: 1 }, // where seeded instances run: the cheapest, excluded by a replacement
  { factor: 1.1, reliability: 0.97, disk: 2 },
  { factor: 1.0, reliability: 0.8, disk: 2 }, // cheap but unreliable
  { factor: 1.05, reliability: 0.99, disk: 0.5 }, // too little disk
  { factor: 1.6, reliability: 0.999, disk: 4 }, // too dear
];

const slug = (gpuName: string) => gpuName.toLowerCase().replace(/[^a-z0-9]+/g, "");

/** The catalogue's offers for one GPU model and count at its base price. */
export function machinesFor(gpuName: string, gpuCount: number, basePrice: number): Offer[] {
  return MACHINE_SHAPES.map((shape, i) => ({
    id: `sim-offer-${slug(gpuName)}x${gpuCount}-${i + 1}`,
    machineId: `sim-host-${slug(gpuName)}x${gpuCount}-${i + 1}`,
    gpuName,
    gpuCount,
    pricePerHour: Math.round(basePrice * shape.factor * 1000) / 1000,
    diskGb: DISK_GB_PER_GPU * gpuCount * shape.disk,
    reliability: shape.reliability,
  }));
}

/** The id a created instance gets: its machine in it, so the machine survives without a column. */
export function createdId(machineId: string, n: number): string {
  return `sim-on-${machineId}-${n}`;
}

/** The machine a simulated instance runs on. */
export function simulatedMachineId(row: { id: string; gpuName: string; gpuCount: number }): string {
  const created = /^sim-on-(.+)-\d+$/.exec(row.id);
  return created ? created[1]! : `sim-host-${slug(row.gpuName)}x${row.gpuCount}-1`;
}

/** A simulated instance's disk, GB: its machine's, for a created one. */
export function simulatedDiskGb(row: { id: string; gpuName: string; gpuCount: number; pricePerHour: number }): number {
  const machine = simulatedMachineId(row);
  const shape = /-(\d+)$/.exec(machine);
  const disk = shape ? (MACHINE_SHAPES[Number(shape[1]) - 1]?.disk ?? 1) : 1;
  return DISK_GB_PER_GPU * row.gpuCount * disk;
}

/** What a like-for-like replacement of a simulated instance is made from. */
export function simulatedSpec(row: {
  id: string;
  label: string | null;
  gpuName: string;
  gpuCount: number;
  pricePerHour: number;
}): InstanceSpec {
  return { image: SIM_IMAGE, templateId: null, env: {}, onstart: null, label: row.label, diskGb: simulatedDiskGb(row) };
}

/** The reliability of the machine a simulated instance runs on. */
export function simulatedReliability(row: { id: string; gpuName: string; gpuCount: number }): number {
  const shape = /-(\d+)$/.exec(simulatedMachineId(row));
  return MACHINE_SHAPES[Number(shape?.[1] ?? 1) - 1]?.reliability ?? 0.99;
}

/** A booting created instance has come up by `now`. */
export function booted(row: Booting, now: number): boolean {
  return booting(row) && now >= row.startedAt!;
}

type Booting = { state: string; failure: string | null; statusMessage: string | null; startedAt: number | null };

/** A created instance on its way up: its startedAt holds when it will be up (create + SIM_BOOT_MS). */
export function booting(row: Booting): boolean {
  return row.state === "loading" && row.failure === null && row.statusMessage === SIM_BOOTING && row.startedAt !== null;
}
