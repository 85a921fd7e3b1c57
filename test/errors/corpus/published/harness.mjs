export const records = [];
let current = '';
export function describe(name, fn) {
  const prev = current;
  current = prev ? prev + ' > ' + name : name;
  fn();
  current = prev;
}
export function it(name, fn) {
  const before = records.length;
  try {
    fn();
  } catch (e) {
    records.push({ test: `${current} > ${name}`, error: String(e) });
  }
  for (const r of records.slice(before)) r.test ??= `${current} > ${name}`;
}
export function expect(actual) {
  return {
    toEqual(expected) {
      if (actual && actual.__input) records.push({ test: undefined, input: actual.__input, expected });
    },
    toStrictEqual(expected) {
      if (actual && actual.__input) records.push({ input: actual.__input, expected });
    },
    toBe() {},
    toMatchObject(expected) {
      if (actual && actual.__input) records.push({ input: actual.__input, expected });
    },
  };
}
export function exceptionFromError(_parser, err) {
  return { __input: err };
}
export const defaultStackParser = {};
export const chromeStackLineParser = {};
export const geckoStackLineParser = {};
export const winjsStackLineParser = {};
export const opera10StackLineParser = {};
export const opera11StackLineParser = {};
export function createStackParser() {
  return {};
}
