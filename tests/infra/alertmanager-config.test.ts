import { describe, expect, it } from "vitest";
import { checkAlertmanagerConfig } from "../../infra/region/monitoring-stack";

describe("checkAlertmanagerConfig", () => {
  it("passes an alertmanager.yaml with a route and receivers through unchanged", () => {
    const text = "route:\n  receiver: slack\nreceivers:\n  - name: slack\n    slack_configs: [{ api_url: https://hooks.example.com/x, channel: '#alerts' }]\n";
    expect(checkAlertmanagerConfig(text)).toBe(text);
  });

  it.each([
    ["not YAML", "route: [", /alertmanagerConfig is not YAML/],
    ["no route", "receivers: [{ name: x }]", /must be an alertmanager.yaml with a `route`/],
    ["no receiver", "route: { receiver: x }\nreceivers: []", /at least one entry under `receivers`/],
  ])("refuses %s before it reaches the cluster", (_case, text, message) => {
    expect(() => checkAlertmanagerConfig(text)).toThrow(message);
  });
});
