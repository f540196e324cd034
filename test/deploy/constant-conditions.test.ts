/**
 * serverless/constant-conditions.mjs: the conditions the parameters already decide, rendered away as CloudFormation
 * would evaluate them, so that checkers read only what a deploy creates. The packaged templates themselves are checked
 * in serverless.test.ts (effectiveTemplate refuses one with a condition left).
 */
import { describe, expect, it } from 'vitest';
import { renderConstantConditions, type CloudFormationTemplate } from '../../serverless/constant-conditions.mjs';

const EMPTY = { 'Fn::Equals': ['', ''] };
const SET = { 'Fn::Equals': ['', 'arn:aws:sns:eu-west-1:123456789012:alarms'] };

/** The rendered properties of the one resource of templateWith. */
function alarmProperties(template: CloudFormationTemplate): unknown {
  return template.Resources?.['Alarm']?.['Properties'];
}

/** A template whose one resource has `property` under the conditions given. */
function templateWith(conditions: Record<string, unknown>, property: unknown) {
  return {
    AWSTemplateFormatVersion: '2010-09-09',
    Conditions: conditions,
    Resources: { Alarm: { Type: 'AWS::CloudWatch::Alarm', Properties: { AlarmActions: property } } },
  };
}

describe('renderConstantConditions', () => {
  it.each([
    ['Fn::Equals of two equal literals', { C: EMPTY }, true],
    ['Fn::Equals of two different literals', { C: SET }, false],
    ['Fn::Equals of a number and its string', { C: { 'Fn::Equals': [0, '0'] } }, true],
    ['Fn::Not', { C: { 'Fn::Not': [EMPTY] } }, false],
    ['Fn::And with a false operand', { C: { 'Fn::And': [EMPTY, SET] } }, false],
    ['Fn::Or with a true operand', { C: { 'Fn::Or': [SET, EMPTY] } }, true],
    ['a Condition reference', { C: { Condition: 'D' }, D: { 'Fn::Not': [SET] } }, true],
  ])('chooses the Fn::If branch %s decides', (_name, conditions, value) => {
    const rendered = renderConstantConditions(templateWith(conditions, { 'Fn::If': ['C', ['yes'], ['no']] }));

    expect(alarmProperties(rendered)).toEqual({ AlarmActions: value ? ['yes'] : ['no'] });
    expect(rendered).not.toHaveProperty('Conditions');
  });

  it('removes the property whose chosen branch is AWS::NoValue, and the list item', () => {
    const noValue = { Ref: 'AWS::NoValue' };
    const template = templateWith(
      { HasTopic: { 'Fn::Not': [EMPTY] } },
      {
        'Fn::If': ['HasTopic', [''], noValue],
      },
    );
    (template.Resources.Alarm.Properties as Record<string, unknown>)['OKActions'] = [
      'kept',
      { 'Fn::If': ['HasTopic', 'dropped', noValue] },
    ];

    const rendered = renderConstantConditions(template);

    expect(alarmProperties(rendered)).toEqual({ OKActions: ['kept'] });
  });

  it('removes a resource and an output under a false condition and keeps those under a true one without it', () => {
    const rendered = renderConstantConditions({
      Conditions: { Yes: EMPTY, No: SET },
      Resources: {
        Created: { Type: 'AWS::SNS::Topic', Condition: 'Yes', Properties: {} },
        Skipped: { Type: 'AWS::SNS::Topic', Condition: 'No', Properties: {} },
      },
      Outputs: { Shown: { Condition: 'Yes', Value: 'a' }, Hidden: { Condition: 'No', Value: 'b' } },
    });

    expect(rendered).toEqual({
      Resources: { Created: { Type: 'AWS::SNS::Topic', Properties: {} } },
      Outputs: { Shown: { Value: 'a' } },
    });
  });

  it('keeps a condition a deploy decides, and the section whole, rendering only the constant ones', () => {
    const conditions = {
      Constant: EMPTY,
      AtDeploy: { 'Fn::And': [{ Condition: 'Constant' }, { 'Fn::Equals': [{ Ref: 'Topic' }, ''] }] },
    };
    const template = templateWith(conditions, {
      'Fn::If': ['AtDeploy', [{ 'Fn::If': ['Constant', 'a', 'b'] }], { Ref: 'AWS::NoValue' }],
    });

    const rendered = renderConstantConditions(template);

    expect(rendered.Conditions).toEqual(conditions);
    expect(alarmProperties(rendered)).toEqual({
      AlarmActions: { 'Fn::If': ['AtDeploy', ['a'], { Ref: 'AWS::NoValue' }] },
    });
  });

  it('leaves an IAM statement’s own Condition alone', () => {
    const statement = { Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': false } } };
    const rendered = renderConstantConditions(templateWith({}, [statement]));

    expect(alarmProperties(rendered)).toEqual({ AlarmActions: [statement] });
  });

  it.each([
    ['a condition it does not define', { C: { Condition: 'Missing' } }, 'condition "Missing"'],
    ['a condition that refers to itself', { C: { 'Fn::Not': [{ Condition: 'C' }] } }, 'condition C refers to itself'],
  ])('refuses %s', (_name, conditions, message) => {
    expect(() => renderConstantConditions(templateWith(conditions, []))).toThrow(message);
  });
});
