/**
 * The lost-GPU rule (fleet/replacement/replacement-proposal.ts HOST_NO_GPU) recognises RunPod's real
 * refusal of a resume ("There are not enough free GPUs on the host machine to start this pod.",
 * runpod-python and RunPod's docs), which the old pattern ("not enough gpus") did not.
 */
import { describe, expect, it } from "vitest";
import { HOST_NO_GPU } from "../../fleet/replacement/replacement-proposal.ts";

describe("lost-GPU refusals", () => {
  it("matches RunPod's and Vast.ai's answers, not an unrelated failure", () => {
    expect(HOST_NO_GPU.test("There are not enough free GPUs on the host machine to start this pod.")).toBe(true);
    expect(HOST_NO_GPU.test("machine no longer has the requested GPU")).toBe(true);
    expect(HOST_NO_GPU.test("insufficient balance")).toBe(false);
  });
});
