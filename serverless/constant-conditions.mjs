/**
 * The template's constant conditions rendered away before osls writes it. serverless.yml's conditions compare
 * `${param:...}` values, which osls resolves while it packages, so each reaches the template as a comparison of two
 * literals (`Fn::Equals: ['', '']`). CloudFormation would evaluate them the same way at every deploy, but checkers
 * read both branches of every Fn::If: cfn-lint refuses the empty ARN and the [''] list of the branch a parameter set
 * never takes (E3033, W8003). So each condition whose value the template already fixes is evaluated here, as
 * CloudFormation evaluates it (docs: "Condition functions"): a resource or output under a false condition is removed,
 * every Fn::If on it is replaced by the branch it chooses, and AWS::NoValue removes its property or list item. A
 * condition that still depends on something unknown until deploy time (a real Parameter, a reference) is kept as is.
 */

const NO_VALUE = Symbol('AWS::NoValue');

function isRecord(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The one key of an intrinsic function's object, or undefined when it has another number of keys. */
function onlyKey(value) {
  const keys = Object.keys(value);
  return keys.length === 1 ? keys[0] : undefined;
}

/** A literal the template fixes: a string, number or boolean (CloudFormation compares them as strings). */
function literal(value) {
  return typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean'
    ? String(value)
    : undefined;
}

/**
 * The value of each condition of the Conditions section that literals alone decide; a condition that depends on
 * anything else maps to undefined. Throws on a reference to a condition that is not defined, or a cycle.
 */
function evaluateConditions(definitions) {
  const values = new Map();
  const evaluating = new Set();
  const named = (name) => {
    if (typeof name !== 'string' || !Object.hasOwn(definitions, name))
      throw new Error(`the template refers to condition ${JSON.stringify(name)}, which it does not define`);
    if (values.has(name)) return values.get(name);
    if (evaluating.has(name)) throw new Error(`condition ${name} refers to itself`);
    evaluating.add(name);
    const value = evaluate(definitions[name]);
    evaluating.delete(name);
    values.set(name, value);
    return value;
  };
  const evaluate = (expression) => {
    if (!isRecord(expression)) return undefined;
    const key = onlyKey(expression);
    const argument = key === undefined ? undefined : expression[key];
    if (key === 'Condition') return named(argument);
    if (!Array.isArray(argument)) return undefined;
    if (key === 'Fn::Equals') {
      const [left, right] = argument.map(literal);
      return left === undefined || right === undefined ? undefined : left === right;
    }
    const operands = argument.map(evaluate);
    if (key === 'Fn::Not') return operands[0] === undefined ? undefined : !operands[0];
    // One false operand decides an And, one true an Or, whatever the unknown ones turn out to be.
    if (key === 'Fn::And') return operands.includes(false) ? false : operands.includes(undefined) ? undefined : true;
    if (key === 'Fn::Or') return operands.includes(true) ? true : operands.includes(undefined) ? undefined : false;
    return undefined;
  };
  for (const name of Object.keys(definitions)) named(name);
  return values;
}

/**
 * The template with its constant conditions rendered away (a new object; the argument is not changed). A template
 * whose conditions are all constant comes back without a Conditions section, an Fn::If or an AWS::NoValue.
 */
export function renderConstantConditions(template) {
  const definitions = template.Conditions ?? {};
  const values = evaluateConditions(definitions);
  const known = (name) => typeof name === 'string' && values.get(name) !== undefined;
  const render = (value) => {
    if (Array.isArray(value)) return value.map(render).filter((item) => item !== NO_VALUE);
    if (!isRecord(value)) return value;
    const key = onlyKey(value);
    if (key === 'Ref' && value.Ref === 'AWS::NoValue') return NO_VALUE;
    if (key === 'Fn::If' && Array.isArray(value['Fn::If'])) {
      const [name, whenTrue, whenFalse] = value['Fn::If'];
      if (known(name)) return render(values.get(name) ? whenTrue : whenFalse);
      // Left to deploy time: each branch rendered, an AWS::NoValue branch kept for CloudFormation to apply.
      const branch = (chosen) => {
        const result = render(chosen);
        return result === NO_VALUE ? chosen : result;
      };
      return { 'Fn::If': [name, branch(whenTrue), branch(whenFalse)] };
    }
    const rendered = {};
    for (const [name, item] of Object.entries(value)) {
      const result = render(item);
      if (result !== NO_VALUE) rendered[name] = result;
    }
    return rendered;
  };
  /** A Resources or Outputs section: entries under a false condition removed, a true one's Condition dropped. */
  const section = (entries) => {
    const kept = {};
    for (const [id, entry] of Object.entries(entries ?? {})) {
      if (!known(entry.Condition)) kept[id] = render(entry);
      else if (values.get(entry.Condition)) {
        const decided = { ...entry };
        delete decided.Condition;
        kept[id] = render(decided);
      }
    }
    return kept;
  };
  const rendered = {};
  for (const [name, value] of Object.entries(template)) {
    if (name === 'Resources' || name === 'Outputs') rendered[name] = section(value);
    // A condition left to deploy time may name a constant one, so the section stays whole while any is left.
    else if (name === 'Conditions') {
      if (Object.keys(definitions).some((condition) => !known(condition))) rendered[name] = value;
    } else rendered[name] = render(value);
  }
  return rendered;
}
