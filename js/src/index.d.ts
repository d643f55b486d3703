export declare const core: typeof import("./core");
