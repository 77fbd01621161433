// Checks deploy/k8s/*.yaml without a cluster: every object against the Kubernetes API's JSON
// schema (the kubernetes-models package, Kubernetes 1.27 schemas), then what the schema cannot
// know: the client Job is Indexed with completions = parallelism = --shard-count, each pod's
// summary file carries its index, the merge Job reads one file per index, the servers, Service
// and clients agree on the port, and every pod mounts the same results claim.
// Run through validate.sh (which installs the two npm packages into a scratch folder).
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";

const here = dirname(fileURLToPath(import.meta.url));
const files = ["echo-server.yaml", "client-job.yaml", "merge-job.yaml"];
const models = {
  "apps/v1/Deployment": "kubernetes-models/apps/v1/Deployment",
  "v1/Service": "kubernetes-models/v1/Service",
  "v1/PersistentVolumeClaim": "kubernetes-models/v1/PersistentVolumeClaim",
  "batch/v1/Job": "kubernetes-models/batch/v1/Job",
};

const problems = [];
const objects = {};
for (const file of files) {
  let text;
  try {
    text = readFileSync(join(here, file), "utf8");
  } catch (e) {
    problems.push(`${file}: cannot be read (${e.code ?? e.message})`);
    continue;
  }
  const docs = parseAllDocuments(text);
  for (const doc of docs) {
    if (doc.errors.length > 0) {
      problems.push(`${file}: YAML: ${doc.errors.map((e) => e.message).join("; ")}`);
      continue;
    }
    const object = doc.toJS();
    if (object === null || object === undefined) {
      continue; // an empty document (a trailing "---"): valid YAML, nothing to check
    }
    if (typeof object !== "object" || Array.isArray(object)) {
      problems.push(`${file}: a document that is not a Kubernetes object`);
      continue;
    }
    const key = `${object.apiVersion}/${object.kind}`;
    if (!models[key]) {
      problems.push(`${file}: no schema here for ${key}`);
      continue;
    }
    const module = await import(models[key]);
    const Model = module[object.kind] ?? module.default;
    try {
      new Model(object).validate();
      console.log(`schema ok: ${file} ${key} ${object.metadata.name}`);
    } catch (e) {
      problems.push(`${file}: ${key} ${object.metadata?.name}: ${e.message}`);
    }
    objects[`${object.kind}/${object.metadata?.name}`] = object;
  }
}

const flag = (args, name) => {
  const i = args.indexOf(name);
  return i >= 0 && i + 1 < args.length ? args[i + 1] : undefined;
};
const check = (ok, text) => (ok ? console.log(`ok: ${text}`) : problems.push(text));

const clients = objects["Job/netzlink-stress-clients"];
const merge = objects["Job/netzlink-stress-merge"];
const server = objects["Deployment/netzlink-echo"];
const service = objects["Service/netzlink-echo"];
if (problems.length > 0) {
  // The checks below read fields the schema errors above may lack.
} else if (clients && merge && server && service) {
  const pod = clients.spec.template.spec;
  const args = pod.containers[0].args;
  const shards = Number(flag(args, "--shard-count"));
  check(clients.spec.completionMode === "Indexed", "the client Job is Indexed");
  check(clients.spec.completions === shards && clients.spec.parallelism === shards,
    `completions (${clients.spec.completions}) = parallelism (${clients.spec.parallelism}) = --shard-count (${shards})`);
  check(!args.includes("--shard-index"), "no --shard-index: each pod takes JOB_COMPLETION_INDEX");
  check(flag(args, "--start-at") === "__START_AT__", "--start-at is the placeholder replaced when applying");
  check(args.includes("--json-histogram") && flag(args, "--summary-json") === "/results/client-$(SHARD_INDEX).json",
    "each pod writes /results/client-<index>.json with the histogram");
  const index = pod.containers[0].env.find((e) => e.name === "SHARD_INDEX");
  check(index?.valueFrom?.fieldRef?.fieldPath === "metadata.annotations['batch.kubernetes.io/job-completion-index']",
    "SHARD_INDEX is the pod's completion index");
  const inputs = merge.spec.template.spec.containers[0].args.filter((a) => a.startsWith("/results/client-"));
  const expected = Array.from({ length: shards }, (_, i) => `/results/client-${i}.json`);
  check(JSON.stringify(inputs) === JSON.stringify(expected), `the merge reads ${expected.length} files, one per index`);
  const serverArgs = server.spec.template.spec.containers[0].args;
  const port = flag(args, "--port");
  check(flag(serverArgs, "--port") === port && String(service.spec.ports[0].port) === port && String(service.spec.ports[0].targetPort) === port,
    `servers, Service and clients use port ${port}`);
  check(flag(args, "--host") === service.metadata.name, "the clients connect to the Service by name");
  const claims = [clients, merge].map((j) => j.spec.template.spec.volumes[0].persistentVolumeClaim.claimName);
  check(claims.every((c) => objects[`PersistentVolumeClaim/${c}`]), "both Jobs mount the results claim");
} else {
  problems.push("expected Deployment/netzlink-echo, Service/netzlink-echo, Job/netzlink-stress-clients and Job/netzlink-stress-merge");
}

if (problems.length > 0) {
  for (const p of problems) console.error(`error: ${p}`);
  process.exit(1);
}
console.log("deploy/k8s: every object valid");
