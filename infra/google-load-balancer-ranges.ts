/**
 * Source ranges of Google's health checkers and of the global external Application Load Balancer's proxies
 * (GFEs); for zonal NEGs they are the same ranges, so one firewall rule admits both.
 * https://cloud.google.com/load-balancing/docs/firewall-rules
 */
export const googleLoadBalancerRanges = ["35.191.0.0/16", "130.211.0.0/22"] as const;
