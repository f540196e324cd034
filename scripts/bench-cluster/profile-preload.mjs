// Preloaded (NODE_OPTIONS=--import) into the webhook processes `npm run bench:cluster --profile DIR` starts: samples
// their CPU with the inspector's profiler (--cpu-prof is not allowed in NODE_OPTIONS) and writes DIR/NAME-PID.cpuprofile
// when they are stopped, for Chrome DevTools or speedscope.
import inspector from 'node:inspector';
import { writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

const dir = process.env.BENCH_PROFILE_DIR;
if (dir !== undefined) {
  const name = process.argv.includes('serve') ? 'serve' : basename(process.argv[1] ?? 'node', '.mjs');
  const session = new inspector.Session();
  session.connect();
  session.post('Profiler.enable');
  // 250 µs: fine enough for an admission of under a millisecond (the default 1 ms is not).
  session.post('Profiler.setSamplingInterval', { interval: 250 });
  session.post('Profiler.start');
  let written = false;
  const write = () => {
    if (written) return;
    written = true;
    // An in-process session answers synchronously, so this completes before the process exits.
    session.post('Profiler.stop', (error, result) => {
      if (error === null) writeFileSync(join(dir, `${name}-${process.pid}.cpuprofile`), JSON.stringify(result.profile));
    });
  };
  process.on('SIGTERM', () => {
    write();
    // Alone, this listener would keep the process from ending on SIGTERM, as it otherwise would.
    if (process.listenerCount('SIGTERM') === 1) process.exit(143);
  });
  process.on('exit', write);
}
