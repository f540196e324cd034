import { describe, expect, it } from 'vitest';
import { ClusterError, errorLogFields } from '../../lib/errors/index.ts';

describe('errorLogFields', () => {
  it('gives an error its name and message', () => {
    expect(errorLogFields(new TypeError('bad'))).toEqual({ errorName: 'TypeError', errorMessage: 'bad' });
  });

  it('adds the reason a PodMutationError carries in its context', () => {
    const error = new ClusterError('forbidden to list', { context: { reason: 'forbidden', token: 'secret' } });
    expect(errorLogFields(error)).toEqual({
      errorName: 'ClusterError',
      errorMessage: 'forbidden to list',
      errorReason: 'forbidden',
    });
  });

  it('names a thrown value that is not an error by its type', () => {
    expect(errorLogFields('gone')).toEqual({ errorName: 'string', errorMessage: 'gone' });
  });
});
