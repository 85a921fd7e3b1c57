// The published SDK's types, flattened: the SDK imports its resource types from src/contract, where
// they are inferred from zod schemas. Declarations that kept `z.output<typeof backup>` would need
// zod (and our schemas) installed just to type-check, so each imported type is written out in full
// here, as the checker resolves it. A type that still names something unknown fails the build
// (build.ts compiles the result on its own).
import ts from 'typescript';

export interface ContractImports {
  /** `export type Name = …;` for every type the SDK imports from src/contract. */
  source: string;
  names: string[];
}

const flags = ts.TypeFormatFlags.NoTruncation | ts.TypeFormatFlags.InTypeAlias;

export function flattenContractTypes(program: ts.Program, sdkDir: string): ContractImports {
  const checker = program.getTypeChecker();
  const types = new Map<string, string>();
  for (const file of program.getSourceFiles()) {
    if (!file.fileName.startsWith(sdkDir)) continue;
    for (const statement of file.statements) {
      if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
      if (!statement.moduleSpecifier.text.startsWith('../contract/')) continue;
      const bindings = statement.importClause?.namedBindings;
      if (!bindings || !ts.isNamedImports(bindings) || !statement.importClause?.isTypeOnly) {
        throw new Error(`${file.fileName}: import only types from src/contract (import type { … })`);
      }
      for (const element of bindings.elements) {
        const name = element.name.text;
        const symbol = checker.getAliasedSymbol(checker.getSymbolAtLocation(element.name)!);
        types.set(name, written(checker, checker.getDeclaredTypeOfSymbol(symbol), name));
      }
    }
  }
  const names = [...types.keys()].sort();
  const source = names.map((name) => `export type ${name} = ${types.get(name)};\n`).join('');
  return { source, names };
}

/** The type in full; an interface (which prints as its own name) property by property. */
function written(checker: ts.TypeChecker, type: ts.Type, name: string): string {
  const text = checker.typeToString(type, undefined, flags);
  if (text !== name) return text;
  const members = checker.getPropertiesOfType(type).map((property) => {
    const optional = property.flags & ts.SymbolFlags.Optional ? '?' : '';
    const propertyType = checker.getTypeOfSymbol(property);
    return `${JSON.stringify(property.name)}${optional}: ${checker.typeToString(propertyType, undefined, flags)};`;
  });
  return `{ ${members.join(' ')} }`;
}
