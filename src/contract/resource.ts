// A resource of the wire: an object schema under the name the OpenAPI document gives it
// (`components.schemas.<id>`), so every resource is named the same way.
import { z } from 'zod';

/** `z.object(shape)` registered as the OpenAPI component `id`. */
export const resource = <S extends z.ZodRawShape>(id: string, shape: S) => z.object(shape).meta({ id });
