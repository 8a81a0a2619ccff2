# shellcheck shell=bash
# The seed's five checks again, through the session gateway: sourced by run-kind.sh once the chart runs the
# memory server (its helpers say, pod_of_claim, in_pod, EXCHANGE, fail and its NS, SANDBOX_NS, IMAGE, ROOT
# are used here). The chart is upgraded with gateway.enabled and one service, kind-agent: a sandbox running
# a small node server (the tether image) that answers each check's request from inside the sandbox with its
# own workload token. Requests go to the gateway through `kubectl port-forward`, one curl cookie jar per
# session; the gateway makes a SandboxClaim per session and deletes it when the session idles (20s).

for tool in curl node openssl; do need "$tool"; done
GATEWAY_PORT="${GATEWAY_PORT:-18081}"
AGENT_HOST="kind-agent.default.kind.test"
work="$(mktemp -d)"
pf_pid=""
cleanup_gateway() {
  if [ -n "$pf_pid" ]; then kill "$pf_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup_gateway EXIT

# The Knative Service kind-agent: kind_agent_manifest IMAGE AGENT_FILE.
# shellcheck source=SCRIPTDIR/kind-agent-manifest.sh
. "$ROOT/deploy/kind/kind-agent-manifest.sh"
kind_agent_manifest "$IMAGE" "$ROOT/deploy/kind/kind-agent.mjs" >"$work/kind-agent.yaml"

say "gateway: secrets, chart upgrade with gateway.enabled and the kind-agent service"
# Made once: a new claim secret on a rerun would give every session another claim name (and memory).
kubectl -n "$NS" get secret tether-gateway-secrets >/dev/null 2>&1 ||
  kubectl -n "$NS" create secret generic tether-gateway-secrets \
    --from-literal=claim-secret="$(openssl rand -hex 32)" --from-literal=session-secret="$(openssl rand -hex 32)"
helm upgrade --install tether "$ROOT/deploy/helm/tether" --namespace "$NS" --reuse-values \
  --set gateway.enabled=true --set gateway.domain=kind.test --set "gateway.sandboxNamespace=$SANDBOX_NS" \
  --set-file "gateway.services.kind-agent\.yaml=$work/kind-agent.yaml" --wait --timeout 5m
kubectl -n "$NS" rollout status deployment/tether-gateway --timeout=180s
kubectl -n "$NS" port-forward svc/tether-gateway "$GATEWAY_PORT:8081" >"$work/port-forward.log" 2>&1 &
pf_pid=$!
for _ in $(seq 1 60); do
  curl -s -o /dev/null "http://127.0.0.1:$GATEWAY_PORT/" && break
  sleep 1
done

# A request of session $1 (its cookie jar) to the kind-agent sandbox, path $2: prints the JSON answer.
via_gateway() {
  curl -sS --fail-with-body --max-time 120 -b "$work/$1.jar" -c "$work/$1.jar" \
    -H "Host: $AGENT_HOST" "http://127.0.0.1:$GATEWAY_PORT$2"
}
# The value of field $2 in the JSON $1.
field() { node -e 'const v = JSON.parse(process.argv[1])[process.argv[2]]; console.log(v ?? "")' "$1" "$2"; }

# Fails naming $2 unless the JSON $1 has each field=value given after it.
expect() {
  local json="$1" what="$2" pair
  shift 2
  for pair in "$@"; do
    [ "$(field "$json" "${pair%%=*}")" = "${pair#*=}" ] || fail "$what: $json"
  done
}

# The gateway's warm sandbox: the pod of a Sandbox owned by the SandboxWarmPool kind-agent (named after its service).
gateway_warm_pod() {
  for _ in $(seq 1 120); do
    for sb in $(kubectl -n "$SANDBOX_NS" get sandbox -o name 2>/dev/null); do
      local name="${sb#*/}" owner
      owner="$(kubectl -n "$SANDBOX_NS" get "$sb" -o jsonpath='{.metadata.ownerReferences[0].kind}/{.metadata.ownerReferences[0].name}' 2>/dev/null || true)"
      if [ "$owner" = SandboxWarmPool/kind-agent ] && kubectl -n "$SANDBOX_NS" wait --for=condition=Ready "pod/$name" --timeout=2s >/dev/null 2>&1; then
        echo "$name"
        return 0
      fi
    done
    sleep 1
  done
  fail "the gateway's warm pool has no ready pod"
}

say "gateway check 1: the gateway's warm sandbox is refused a key; session a's sandbox gets one"
warm="$(gateway_warm_pod)"
in_pod "$warm" "$EXCHANGE
if (r.status !== 401 || body.error?.message !== 'still in warm pool') {
  console.log('FAIL: gateway check 1: a warm-pool pod got', r.status, JSON.stringify(body)); process.exit(1);
}" || fail "gateway check 1"
a="$(via_gateway a /exchange)" || fail "gateway check 1: session a: $a"
ns_a="$(field "$a" namespace)"
expect "$a" "gateway check 1: session a exchanged" status=200
[ "${ns_a%%:*}" = "$SANDBOX_NS" ] || fail "gateway check 1: session a got namespace $ns_a"
claim_a="${ns_a#*:}"

say "gateway check 2: session a ($ns_a) remembers a preference twice and saves working state"
r="$(via_gateway a /remember)" || fail "gateway check 2: $r"
expect "$r" "gateway check 2: remember twice" stored=true already_known=true
r="$(via_gateway a /save)" || fail "gateway check 2: $r"
expect "$r" "gateway check 2: working state" resumed=200 saved=200

say "gateway check 3: session a idles, its sandbox is deleted; its next request gets a new one that resumes"
kubectl -n "$SANDBOX_NS" wait --for=delete "sandboxclaim/$claim_a" --timeout=180s ||
  fail "gateway check 3: the idle session's claim $claim_a was not deleted"
r="$(via_gateway a /resume)" || fail "gateway check 3: $r"
expect "$r" "gateway check 3: session a came back" status=200 "namespace=$ns_a" "goal=ship issue 14"

say "gateway check 4: session b cannot read session a's memory (403 namespace_mismatch)"
r="$(via_gateway b "/read?namespace=$ns_a")" || fail "gateway check 4: $r"
expect "$r" "gateway check 4: session b reading $ns_a" read=403 code=namespace_mismatch resume=403

say "gateway check 5: a gateway sandbox cannot reach the database under the memory server"
r="$(via_gateway b "/db?host=tether-postgres.$NS.svc.cluster.local")" || fail "gateway check 5: $r"
expect "$r" "gateway check 5: the sandbox reached PostgreSQL" reached=false

say "all five checks passed through the gateway"
