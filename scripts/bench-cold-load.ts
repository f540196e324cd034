// Child process of `npm run bench`: the admission cache's first read in a fresh process, as on a cold start. It reads
// the snapshot the parent published (pointer, parts, digests, content hash), validates every rule again and compiles
// it, and prints the milliseconds (wall and CPU) as JSON. Module loading is left out: `npm run build` measures that.
import { createAdmissionRulesCache } from '../lib/endpoint/index.ts';
import { createDynamoClient, openRulesTable } from '../lib/store/index.ts';

const [endpoint, tableName, clusterId] = process.argv.slice(2);
if (endpoint === undefined || tableName === undefined || clusterId === undefined)
  throw new Error('usage: bench-cold-load ENDPOINT TABLE CLUSTER');
const client = createDynamoClient({ endpoint });
const { snapshots, placements } = openRulesTable({ client, tableName, clusterId });
const cache = createAdmissionRulesCache({
  snapshots,
  placements,
  clusterId,
  refreshSeconds: 30,
  maxStaleSeconds: 300,
  capacityFlavour: 'karpenter',
});
const started = performance.now();
const cpuBefore = process.cpuUsage();
const snapshot = await cache.get();
const ms = performance.now() - started;
// CPU time as well: on a shared machine the wall time also counts the time other processes held the cores.
const cpu = process.cpuUsage(cpuBefore);
client.destroy();
console.log(JSON.stringify({ ms, cpuMs: (cpu.user + cpu.system) / 1000, rules: snapshot.value.rules.length }));
