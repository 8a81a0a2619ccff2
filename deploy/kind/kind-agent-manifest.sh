# shellcheck shell=bash
# kind_agent_manifest IMAGE AGENT_FILE: prints the Knative Service kind-agent that deploy/kind/gateway-checks.sh
# gives the gateway: sessions by cookie "agent", one per sandbox, one warm sandbox, deleted after 20s idle (so
# check 3 sees the session come back in a new sandbox with the same claim name), running AGENT_FILE with node
# in IMAGE. test/deploy/image-and-kind.test.ts parses its output with the gateway's own manifest parser.
kind_agent_manifest() {
  cat <<EOF
apiVersion: serving.knative.dev/v1
kind: Service
metadata:
  name: kind-agent
spec:
  template:
    metadata:
      annotations:
        serving.knative.dev/workload-type: "sandbox"
        serving.knative.dev/sandbox-idle-policy: "delete"
        serving.knative.dev/session-affinity: "true"
        serving.knative.dev/session-affinity-cookie: "agent"
        serving.knative.dev/session-timeout: "20s"
        serving.knative.dev/warm-pool: "1"
        autoscaling.knative.dev/target: "1"
    spec:
      containers:
        - image: $1
          command: [node, --input-type=module, -e]
          args:
            - |
EOF
  sed 's/^/              /' "$2"
  cat <<EOF
          ports:
            - containerPort: 8080
EOF
}
