import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { shellBlocks } from './shell-blocks.ts';

const PAGE = `# A page

\`\`\`sh
echo runs
\`\`\`

\`\`\`sh cluster
kubectl get pods
\`\`\`

<!-- needs: cluster -->
\`\`\`bash
kubectl apply -f x.yaml
\`\`\`

<!-- not run: waits two minutes -->

\`\`\`console
$ sleep 120
\`\`\`

<!-- not run:  -->
\`\`\`sh
echo a marker without a reason does not count
\`\`\`

<!-- not run: too far away -->
Some text in between.
\`\`\`sh
echo the marker must be right before the block
\`\`\`

\`\`\`ts
const notShell = 1;
\`\`\`
`;

describe('shellBlocks', () => {
  const blocks = shellBlocks('page.md', PAGE);

  it('finds the shell blocks only, with their lines and text', () => {
    assert.deepEqual(
      blocks.map((b) => [b.line, b.info]),
      [
        [3, 'sh'],
        [7, 'sh cluster'],
        [12, 'bash'],
        [18, 'console'],
        [23, 'sh'],
        [29, 'sh'],
      ],
    );
    assert.equal(blocks[0]?.code, 'echo runs\n');
  });

  it('reads the marks: a cluster fence or comment, a not-run reason right before the block', () => {
    assert.deepEqual(
      blocks.map((b) => b.notRun),
      [
        null,
        { kind: 'cluster', reason: 'needs a Kubernetes cluster' },
        { kind: 'cluster', reason: 'needs a Kubernetes cluster' },
        { kind: 'not run', reason: 'waits two minutes' },
        null,
        null,
      ],
    );
  });
});
