#!/usr/bin/env bash
# Tether on kind: makes (or reuses) a kind cluster, installs kubernetes-sigs/agent-sandbox, builds the
# tether image and loads it into the cluster, installs the Helm chart (memory server on PostgreSQL), then
# runs the seed's five checks from inside sandboxes, first in sandboxes claimed by hand, then again through
# the session gateway (chart value gateway.enabled with one service, kind-agent, whose sandboxes answer
# check requests). Each check that fails prints a FAIL: line and the script exits non-zero.
#
# Needs docker, kind, kubectl and helm. It cannot run on the machines this project is built on (no Docker
# engine there); CI checks it with `bash -n` and shellcheck.
#
#   deploy/kind/run-kind.sh                      # cluster "tether", agent-sandbox latest release
#   AGENT_SANDBOX_VERSION=v0.1.1 KEEP=1 deploy/kind/run-kind.sh
#   SKIP_GATEWAY=1 deploy/kind/run-kind.sh        # the claimed-sandbox checks only
set -euo pipefail

CLUSTER="${CLUSTER:-tether}"
AGENT_SANDBOX_VERSION="${AGENT_SANDBOX_VERSION:-latest}"
IMAGE="${IMAGE:-tether:dev}"
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
NS=tether
SANDBOX_NS=agents

say() { printf '\n== %s\n' "$*"; }
fail() {
  printf 'FAIL: %s\n' "$*" >&2
  exit 1
}
need() { command -v "$1" >/dev/null 2>&1 || fail "$1 is not installed"; }

for tool in docker kind kubectl helm; do need "$tool"; done

say "cluster $CLUSTER"
if kind get clusters 2>/dev/null | grep -qx "$CLUSTER"; then
  echo "reusing kind cluster $CLUSTER"
else
  kind create cluster --name "$CLUSTER" --wait 120s
fi
kubectl config use-context "kind-$CLUSTER" >/dev/null

say "agent-sandbox $AGENT_SANDBOX_VERSION"
if [ "$AGENT_SANDBOX_VERSION" = latest ]; then
  base="https://github.com/kubernetes-sigs/agent-sandbox/releases/latest/download"
else
  base="https://github.com/kubernetes-sigs/agent-sandbox/releases/download/$AGENT_SANDBOX_VERSION"
fi
kubectl apply -f "$base/manifest.yaml"
kubectl apply -f "$base/extensions.yaml"
kubectl wait --for=condition=Established --timeout=120s \
  crd/sandboxes.agents.x-k8s.io crd/sandboxclaims.extensions.agents.x-k8s.io \
  crd/sandboxtemplates.extensions.agents.x-k8s.io crd/sandboxwarmpools.extensions.agents.x-k8s.io
kubectl -n agent-sandbox-system wait --for=condition=Available --timeout=180s deployment --all

say "image $IMAGE"
docker build -t "$IMAGE" "$ROOT"
kind load docker-image "$IMAGE" --name "$CLUSTER"

say "namespaces, PostgreSQL, secrets"
kubectl create namespace "$NS" --dry-run=client -o yaml | kubectl apply -f -
kubectl create namespace "$SANDBOX_NS" --dry-run=client -o yaml | kubectl apply -f -
pg_password="$(openssl rand -hex 16)"
kubectl -n "$NS" apply -f - <<EOF
apiVersion: apps/v1
kind: Deployment
metadata: {name: tether-postgres, labels: {app.kubernetes.io/name: postgresql}}
spec:
  selector: {matchLabels: {app.kubernetes.io/name: postgresql}}
  template:
    metadata: {labels: {app.kubernetes.io/name: postgresql}}
    spec:
      containers:
        - name: postgres
          image: postgres:16-alpine
          env:
            - {name: POSTGRES_USER, value: tether}
            - {name: POSTGRES_DB, value: tether}
            - {name: POSTGRES_PASSWORD, value: "$pg_password"}
          ports: [{containerPort: 5432}]
          readinessProbe: {exec: {command: [pg_isready, -U, tether]}, periodSeconds: 2}
---
apiVersion: v1
kind: Service
metadata: {name: tether-postgres}
spec:
  selector: {app.kubernetes.io/name: postgresql}
  ports: [{port: 5432}]
EOF
kubectl -n "$NS" create secret generic tether-postgres \
  --from-literal=url="postgres://tether:$pg_password@tether-postgres.$NS.svc.cluster.local:5432/tether" \
  --dry-run=client -o yaml | kubectl apply -f -
kubectl -n "$NS" rollout status deployment/tether-postgres --timeout=180s

say "helm chart"
helm upgrade --install tether "$ROOT/deploy/helm/tether" --namespace "$NS" \
  --set image.repository="${IMAGE%:*}" --set image.tag="${IMAGE##*:}" \
  --set memory.postgres.enabled=true --set gateway.enabled=false \
  --set "sandboxNamespaces={$SANDBOX_NS}" --wait --timeout 5m

say "sandbox template and warm pool"
# The checks run node scripts inside sandboxes: the sandbox image is the tether image, kept idle.
sed -e "s#image: tether-agent:latest#image: $IMAGE\n          command: [node, -e, 'setInterval(() => {}, 1 << 30)']#" \
  "$ROOT/deploy/kubernetes/sandboxtemplate.yaml" | kubectl apply -f -
# One warm sandbox, so check 1 knows which pod claim run-1 must take.
sed -e 's/replicas: 2/replicas: 1/' "$ROOT/deploy/kubernetes/sandboxwarmpool.yaml" | kubectl apply -f -

# ---- helpers ----

# The pod of a Sandbox (agent-sandbox names it after the Sandbox).
pod_of_claim() {
  local claim="$1" sandbox=""
  for _ in $(seq 1 120); do
    sandbox="$(kubectl -n "$SANDBOX_NS" get sandboxclaim "$claim" -o jsonpath='{.status.sandbox.name}' 2>/dev/null || true)"
    if [ -n "$sandbox" ] && kubectl -n "$SANDBOX_NS" wait --for=condition=Ready "pod/$sandbox" --timeout=2s >/dev/null 2>&1; then
      echo "$sandbox"
      return 0
    fi
    sleep 1
  done
  fail "claim $claim got no ready pod"
}

warm_pod() {
  for _ in $(seq 1 120); do
    for p in $(kubectl -n "$SANDBOX_NS" get pods -o name 2>/dev/null); do
      if kubectl -n "$SANDBOX_NS" get "$p" -o jsonpath='{.metadata.ownerReferences[0].kind}' | grep -q Sandbox; then
        local sandbox owner
        sandbox="${p#pod/}"
        owner="$(kubectl -n "$SANDBOX_NS" get sandbox "$sandbox" -o jsonpath='{.metadata.ownerReferences[0].kind}' 2>/dev/null || true)"
        if [ "$owner" = SandboxWarmPool ] && kubectl -n "$SANDBOX_NS" wait --for=condition=Ready "$p" --timeout=2s >/dev/null 2>&1; then
          echo "$sandbox"
          return 0
        fi
      fi
    done
    sleep 1
  done
  fail "the warm pool has no ready pod"
}

# Runs a JavaScript snippet with node inside a pod; it sees TETHER_URL and TETHER_TOKEN_FILE.
in_pod() {
  kubectl -n "$SANDBOX_NS" exec "$1" -- node --input-type=module -e "$2"
}

# The ${...} below is JavaScript's, not the shell's.
# shellcheck disable=SC2016
EXCHANGE='
import { readFileSync } from "node:fs";
const token = readFileSync(process.env.TETHER_TOKEN_FILE, "utf8");
const r = await fetch(`${process.env.TETHER_URL}/v1/auth/kubernetes`, {
  method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ token }) });
const body = await r.json();
'

apply_claim() {
  kubectl -n "$SANDBOX_NS" apply -f - <<EOF
apiVersion: extensions.agents.x-k8s.io/v1beta1
kind: SandboxClaim
metadata: {name: $1}
spec: {warmPoolRef: {name: tether-agents}}
EOF
}

# ---- the five checks ----

say "check 1: a warm-pool sandbox is refused a key; claim run-1 takes that same pod and gets one"
warm="$(warm_pod)"
in_pod "$warm" "$EXCHANGE
if (r.status !== 401 || body.error?.message !== 'still in warm pool') {
  console.log('FAIL: check 1: a warm-pool pod got', r.status, JSON.stringify(body)); process.exit(1);
}" || fail "check 1"
apply_claim run-1
run1="$(pod_of_claim run-1)"
[ "$run1" = "$warm" ] || fail "check 1: claim run-1 took $run1, not the warm pod $warm"

say "check 2: run-1 gets a key for agents:run-1, remembers a preference twice, saves working state"
in_pod "$run1" "$EXCHANGE
const fail = (m) => { console.log('FAIL: check 2:', m); process.exit(1); };
if (r.status !== 200 || body.namespace !== 'agents:run-1') fail('exchange ' + r.status + ' ' + JSON.stringify(body));
const call = (method, path, b, h = {}) => fetch(process.env.TETHER_URL + path, { method,
  headers: { authorization: 'Bearer ' + body.key, 'content-type': 'application/json', ...h }, body: JSON.stringify(b) })
  .then(async (x) => ({ status: x.status, json: await x.json() }));
const pref = { subject: 'user', predicate: 'prefers', value: 'dark mode' };
const one = await call('POST', '/v1/memories', pref);
const two = await call('POST', '/v1/memories', pref);
if (!one.json.stored || !two.json.already_known) fail('remember twice: ' + JSON.stringify([one, two]));
const resumed = await call('POST', '/v1/resume', {});
if (resumed.status !== 200) fail('resume ' + resumed.status + ' ' + JSON.stringify(resumed.json));
const epoch = String(resumed.json.epoch);
const saved = await call('PATCH', '/v1/working-state', { goal: 'ship issue 14', step: 3 }, { 'x-lease-epoch': epoch });
if (saved.status !== 200) fail('working state ' + saved.status + ' ' + JSON.stringify(saved.json));
await call('POST', '/v1/lease/release', { epoch: Number(epoch) });
" || fail "check 2"

say "check 3: the claim is deleted and made again; the new pod gets agents:run-1 and resumes"
kubectl -n "$SANDBOX_NS" delete sandboxclaim run-1 --wait=true
apply_claim run-1
run1b="$(pod_of_claim run-1)"
in_pod "$run1b" "$EXCHANGE
const fail = (m) => { console.log('FAIL: check 3:', m); process.exit(1); };
if (r.status !== 200 || body.namespace !== 'agents:run-1') fail('exchange ' + r.status);
const res = await fetch(process.env.TETHER_URL + '/v1/resume', { method: 'POST',
  headers: { authorization: 'Bearer ' + body.key, 'content-type': 'application/json' }, body: '{}' });
const j = await res.json();
if (res.status !== 200 || j.working_state?.goal !== 'ship issue 14') fail('resume ' + res.status + ' ' + JSON.stringify(j));
" || fail "check 3"

say "check 4: run-2 cannot read agents:run-1 (403 namespace_mismatch)"
apply_claim run-2
run2="$(pod_of_claim run-2)"
in_pod "$run2" "$EXCHANGE
const fail = (m) => { console.log('FAIL: check 4:', m); process.exit(1); };
if (r.status !== 200 || body.namespace !== 'agents:run-2') fail('exchange ' + r.status);
const h = { authorization: 'Bearer ' + body.key, 'content-type': 'application/json' };
const read = await fetch(process.env.TETHER_URL + '/v1/memories?namespace=agents:run-1&subject=user', { headers: h });
const rj = await read.json();
if (read.status !== 403 || rj.error?.code !== 'namespace_mismatch') fail('read ' + read.status + ' ' + JSON.stringify(rj));
const res = await fetch(process.env.TETHER_URL + '/v1/resume', { method: 'POST', headers: h, body: JSON.stringify({ namespace: 'agents:run-1' }) });
if (res.status !== 403) fail('resume of run-1 answered ' + res.status);
" || fail "check 4"

say "check 5: a sandbox cannot reach the database under the memory server"
in_pod "$run2" "
import { connect } from 'node:net';
const s = connect({ host: 'tether-postgres.$NS.svc.cluster.local', port: 5432, timeout: 3000 });
s.on('connect', () => { console.log('FAIL: check 5: the sandbox reached PostgreSQL'); process.exit(1); });
s.on('timeout', () => process.exit(0));
s.on('error', () => process.exit(0));
" || fail "check 5"

say "all five checks passed in claimed sandboxes"
if [ -z "${KEEP:-}" ]; then
  kubectl -n "$SANDBOX_NS" delete sandboxclaim run-1 run-2 --ignore-not-found
fi
[ "${SKIP_GATEWAY:-}" = 1 ] && exit 0

# shellcheck source=SCRIPTDIR/gateway-checks.sh
. "$ROOT/deploy/kind/gateway-checks.sh"
