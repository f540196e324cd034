/**
 * Toleration.ToleratesTaint as k8s.io/api core/v1 toleration_test.go (TestTolerationToleratesTaint and
 * TestCompareNumericValues, v0.37.2) lists it, with the comparison operators on.
 */
import { describe, expect, it } from 'vitest';

import type { Toleration } from '../../lib/scheduling/index.ts';
import { type Taint, type TaintEffect, toleratesTaint } from '../../lib/capacity/taints.ts';

const NO_SCHEDULE: TaintEffect = 'NoSchedule';
const noSchedule = (key: string, value = ''): Taint => ({ key, value, effect: NO_SCHEDULE });
const gt = (value: string): Toleration => ({ key: 'k', operator: 'Gt', value, effect: 'NoSchedule' });
const lt = (value: string): Toleration => ({ key: 'k', operator: 'Lt', value, effect: 'NoSchedule' });

describe('toleratesTaint', () => {
  it.each<[string, Toleration, Taint, boolean]>([
    [
      'Exists on the key and effect, a taint without value',
      { key: 'foo', operator: 'Exists', effect: 'NoSchedule' },
      noSchedule('foo'),
      true,
    ],
    [
      'Exists on the key and effect, a taint with a value',
      { key: 'foo', operator: 'Exists', effect: 'NoSchedule' },
      noSchedule('foo', 'bar'),
      true,
    ],
    [
      'Exists without a key: every taint of the effect',
      { key: '', operator: 'Exists', effect: 'NoSchedule' },
      noSchedule('foo', 'bar'),
      true,
    ],
    [
      'Equal on key, value and effect',
      { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule' },
      noSchedule('foo', 'bar'),
      true,
    ],
    [
      'Equal on another value',
      { key: 'foo', operator: 'Equal', value: 'value1', effect: 'NoSchedule' },
      noSchedule('foo', 'value2'),
      false,
    ],
    [
      'Equal on another effect',
      { key: 'foo', operator: 'Equal', value: 'bar', effect: 'NoSchedule' },
      { key: 'foo', value: 'bar', effect: 'NoExecute' },
      false,
    ],
    ['no operator means Equal', { key: 'foo', value: 'bar' }, noSchedule('foo', 'bar'), true],
    [
      'an unknown operator tolerates nothing',
      { key: 'foo', operator: 'Matches', value: 'bar' },
      noSchedule('foo', 'bar'),
      false,
    ],
    ['Gt: a taint value under the bound', gt('950'), noSchedule('k', '800'), false],
    ['Gt: a taint value over the bound', gt('750'), noSchedule('k', '950'), true],
    ['Gt: an equal value', gt('950'), noSchedule('k', '950'), false],
    ['Gt: a non-numeric taint value', gt('950'), noSchedule('k', 'high'), false],
    ['Gt: negative numbers, the taint under', gt('-100'), noSchedule('k', '-200'), false],
    ['Gt: negative numbers, the taint over', gt('-200'), noSchedule('k', '-100'), true],
    ['Gt: large int64 values', gt('9223372036854775806'), noSchedule('k', '9223372036854775807'), true],
    ['Lt: a taint value over the bound', lt('800'), noSchedule('k', '950'), false],
    ['Lt: a taint value under the bound', lt('950'), noSchedule('k', '800'), true],
    ['Lt: zero and a negative taint', lt('0'), noSchedule('k', '-1'), true],
    ['Gt: a bound with a leading zero', gt('0100'), noSchedule('k', '200'), false],
    ['Gt: a bound with a plus sign', gt('+100'), noSchedule('k', '200'), false],
    ['Gt: a floating point bound', gt('100.5'), noSchedule('k', '200'), false],
    ['Gt: a bare minus sign', gt('-'), noSchedule('k', '200'), false],
    ['Gt: an empty taint value', gt('100'), noSchedule('k', ''), false],
    ['Lt: a taint value with a plus sign', lt('300'), noSchedule('k', '+200'), false],
    ['Gt: a bound beyond int64', gt('9223372036854775808'), noSchedule('k', '1'), false],
  ])('%s', (_, toleration, taint, tolerated) => {
    expect(toleratesTaint(toleration, taint)).toBe(tolerated);
  });
});
