/**
 * How a serving Deployment rolls: one extra pod at a time and never one fewer, so capacity holds through an
 * update. The extra pod needs a GPU of its own, so every region's GPU pool must have room for
 * `autoscaling.maxReplicas + maxSurge` pods (checked in stack-config.ts): a rollout at peak otherwise waits
 * for a T4 the pool may not add and fails after the Deployment's 30 minute timeout.
 */
export const servingRollout = { maxSurge: 1, maxUnavailable: 0 } as const;
