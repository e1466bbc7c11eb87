public enum FluxPlaceholder {}
