{{/* Common labels of every object. */}}
{{- define "tether.labels" -}}
app.kubernetes.io/part-of: tether
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end }}

{{/* The image reference. */}}
{{- define "tether.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{/* A restricted container security context. */}}
{{- define "tether.securityContext" -}}
runAsNonRoot: true
allowPrivilegeEscalation: false
readOnlyRootFilesystem: true
capabilities:
  drop: [ALL]
seccompProfile:
  type: RuntimeDefault
{{- end }}

{{/* The Secret holding the bootstrap admin key: the user's, or the one the chart keeps. */}}
{{- define "tether.adminKeySecret" -}}
{{ .Values.memory.adminKey.existingSecret | default "tether-admin-key" }}
{{- end }}
